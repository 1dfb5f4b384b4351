// skillspec adapter for npm `@mariozechner/pi-coding-agent` 0.73.1 (the pi coding agent), pinned by
// ./install, driven through its SDK in-process and offline: each case builds a real AgentSession
// (`createAgentSession`, pi's own DefaultResourceLoader, SettingsManager and tools) whose model is
// pi-ai's own scripted provider (`registerFauxProvider`: no network, no key). Every step that needs
// the model is one turn of that session: the faux model records what the session sends it (system
// prompt, tools, messages) and answers with the tool call a step asks for, which runs through pi's
// own agent loop; the adapter reads the message the model receives back.
//
// Claims dialect agentskills 2026-08, mode lenient: "Pi implements the Agent Skills standard,
// warning about violations but remaining lenient" (docs/skills.md:7). Maps (README.md beside this
// file gives every mapping with pi's file:line):
//
//   case_start  a private directory outside the case root: HOME, agentDir (~/.pi/agent) and a
//               project (the session's cwd); config.skills_root goes into the project's
//               .pi/settings.json and config.user_skills_root into agentDir/settings.json, as the
//               `skills` array of each (pi's documented way to name skill directories); then the
//               session, and a baseline session built with pi's `noSkills` (`--no-skills`)
//   discover    session.reload() (pi's /reload), then resourceLoader.getSkills().skills; location
//               = the skill's filePath (the <location> of pi's catalog); body = what pi's
//               /skill:name hands over: stripFrontmatter(file).trim()
//   prompt      one turn each: the systemPrompt the model received
//   tools       one turn: the tools the model received (`read` reported as skill_read_reference)
//   call activate_skill {name}       the user-explicit path: session.prompt(`/skill:<name>`); the
//               user message the model receives. pi passes an unknown name through unexpanded
//               (agent-session.js:852-853), which is mapped to unknown_skill
//   call skill_read_reference {skill, path}   the model calls pi's `read` with the path joined to
//               the skill's directory, as pi's catalog instructions tell it to (skills.js:267-269)
//
// The adapter maps and never decides: every error code comes from pi's own answer (the tables
// below, quoted in `message`); a call it cannot express is a protocol error saying so.
import * as kit from '../kit/node/skillspec-kit.mjs'; // first: it takes over stdin and stdout
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Where ./install put it (the same rule as the install script).
const INSTALL = path.join(process.env.SKILLSPEC_ADAPTER_CACHE
  || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'skillspec', 'adapters'), 'pi');
const MODULES = path.join(INSTALL, 'node_modules', '@mariozechner');
const PACKAGE = path.join(MODULES, 'pi-coding-agent');
const VERSION = readVersion();

const pi = await import(pathToFileURL(path.join(PACKAGE, 'dist', 'index.js')).href);
const ai = await import(pathToFileURL(path.join(MODULES, 'pi-ai', 'dist', 'index.js')).href);
// pi's own frontmatter split, the one its /skill:name expansion uses (agent-session.js:855); not a
// root export, so imported from its file.
const { stripFrontmatter } = await import(pathToFileURL(path.join(PACKAGE, 'dist', 'utils', 'frontmatter.js')).href);

const NATIVE_READ = 'read';
const READ = new kit.MappedTool('skill_read_reference', NATIVE_READ);

// pi's answers to the user-explicit activation (the user message the model receives).
const ACTIVATION = new kit.ErrorMap([
  kit.rule(/^\/skill:/, 'unknown_skill',
    'agent-session.js:852-853 _expandSkillCommand(): a name no loaded skill has is passed through unexpanded '
    + '("Unknown skill, pass through"); a skill whose file cannot be read is passed through the same way (:859-867)',
    { guess: true }),
]);

// Answers of pi's agent loop and its `read` tool (tool results with isError: true).
const ERRORS = new kit.ErrorMap([
  kit.rule(/^Tool \S+ not found/, 'unknown_tool',
    'pi-agent-core/dist/agent-loop.js:335: the tool result for a tool name the session does not have'),
  kit.rule(/^Validation failed for tool "/, 'invalid_args',
    "pi-ai/dist/utils/validation.js:253-278 validateToolArguments(): the tool's argument schema refused the arguments"),
  kit.rule(/^ENOENT: /, 'not_found', 'core/tools/read.js:158 ops.access(): the file or a component is missing'),
  kit.rule(/^ENOTDIR: /, 'not_found', 'core/tools/read.js: a component of the path is not a directory'),
  kit.rule(/^EISDIR: /, 'not_found', 'core/tools/read.js: the path is a directory', { guess: true }),
  kit.rule(/^EACCES: /, 'not_found', 'core/tools/read.js:158 ops.access(): unreadable'),
  kit.rule(/^ELOOP: /, 'not_found', 'core/tools/read.js: a loop of symbolic links', { guess: true }),
  kit.rule(/^ENXIO: /, 'not_found', 'core/tools/read.js: open() of a socket fails ENXIO; pi checks no file type', { guess: true }),
  kit.rule(/^File size \(\d+\) is greater than 2 GiB/, 'too_large',
    "core/tools/read.js reads the file whole with Node's fs.readFile, which refuses a file over 2 GiB (ERR_FS_FILE_TOO_LARGE); pi has no limit of its own"),
]);

const LACKS = {
  skill_run_script: 'pi-coding-agent 0.73.1 has no tool that runs a skill\'s scripts: its tools are read, bash, edit, write '
    + '(core/tools/index.js; system-prompt.js:48); the model runs helpers with its general `bash` tool, a shell command '
    + 'line it writes itself, which has no skill, script or argument-list to map onto',
  validate: 'pi-coding-agent 0.73.1 has no validator: the name and description rules are checked inside the scan '
    + '(core/skills.js:62-93 validateName/validateDescription, not exported) and only turned into warnings while loading',
};

function readVersion() {
  try {
    return JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8')).version;
  } catch (e) {
    throw new Error(`pi-coding-agent is not installed under ${INSTALL} (run runner/adapters/pi/install): ${e.message}`);
  }
}

// One faux provider for the process (it registers an API with pi-ai); every turn sets its script.
// pi's reload() rebuilds pi-ai's provider registry from pi's own providers, which drops it: it is
// registered again, under the same api and provider names, after every reload (`refreshFaux`).
const FAUX_OPTIONS = { api: 'skillspec-faux', provider: 'skillspec-faux' };
let FAUX = ai.registerFauxProvider(FAUX_OPTIONS);

function refreshFaux() {
  try { FAUX.unregister(); } catch { /* already dropped by the reload */ }
  FAUX = ai.registerFauxProvider(FAUX_OPTIONS);
}

/** The text of a message's content (a string, or its text blocks in order). */
function textOf(message) {
  if (typeof message.content === 'string') return message.content;
  const parts = [];
  for (const block of message.content ?? []) {
    if (block.type !== 'text') throw new kit.AdapterError(`the message holds a ${block.type} block, not text`);
    parts.push(block.text);
  }
  return parts.join('');
}

/** A session of pi in `dirs`, as createAgentSession builds it, with the faux model. */
async function makeSession(dirs, { noSkills = false } = {}) {
  const authStorage = pi.AuthStorage.inMemory();
  const model = FAUX.getModel();
  authStorage.setRuntimeApiKey(model.provider, 'skillspec-offline'); // the faux model needs none; pi asks for one (agent-session.js:745-752)
  const settingsManager = pi.SettingsManager.create(dirs.project, dirs.agentDir);
  const options = { cwd: dirs.project, agentDir: dirs.agentDir, authStorage, model, settingsManager,
    sessionManager: pi.SessionManager.inMemory() };
  if (noSkills) {
    options.resourceLoader = new pi.DefaultResourceLoader({ cwd: dirs.project, agentDir: dirs.agentDir, settingsManager, noSkills: true });
    await options.resourceLoader.reload();
  }
  const { session } = await pi.createAgentSession(options);
  return session;
}

class Pi extends kit.Runtime {
  constructor() {
    super();
    this.name = 'pi-coding-agent';
    this.version = VERSION;
    this.dialects = [{ name: 'agentskills', version: '2026-08', mode: 'lenient' }];
    this.formats = ['skill-md'];
    this.toolNames = kit.MappedTool.names(READ);
    // pi's read tool returns any file the process can read, by absolute path or relative to its
    // cwd (core/tools/read.js:143, path-utils.js:54-79): wider than any scope the protocol names;
    // `case-root` is the widest there is (README.md, "Declarations").
    this.readScope = 'case-root';
    this.lacks = LACKS;
    this.dirs = null;
  }

  async startCase(config, root) {
    this.root = root;
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'skillspec-pi-'));
    const home = path.join(base, 'home');
    const agentDir = path.join(home, '.pi', 'agent');
    const project = path.join(base, 'project');
    fs.mkdirSync(agentDir, { recursive: true });
    fs.mkdirSync(path.join(project, '.pi'), { recursive: true });
    this.dirs = { base, home, agentDir, project };
    // The two scopes as a pi user names directories (docs/skills.md:33, docs/settings.md:200):
    // the project's .pi/settings.json and the global agentDir/settings.json, `skills` arrays.
    if (config.skills_root != null) {
      fs.writeFileSync(path.join(project, '.pi', 'settings.json'), JSON.stringify({ skills: [config.skills_root] }));
    }
    if (config.user_skills_root != null) {
      fs.writeFileSync(path.join(agentDir, 'settings.json'), JSON.stringify({ skills: [config.user_skills_root] }));
    }
    // pi reads ~ (os.homedir(), which is $HOME) for ~/.agents/skills and ~/.pi: a private one.
    process.env.HOME = home;
    try {
      this.session = await makeSession(this.dirs); // the scan: DefaultResourceLoader.reload()
      this.baseline = await makeSession(this.dirs, { noSkills: true });
    } catch (e) {
      throw new kit.Refused(e);
    }
  }

  async endCase() {
    for (const s of [this.session, this.baseline]) {
      try { s?.dispose(); } catch { /* already gone */ }
    }
    this.session = this.baseline = null;
    if (this.dirs) fs.rmSync(this.dirs.base, { recursive: true, force: true });
    this.dirs = null;
  }

  /** One turn of `session` with `text`; `toolCall` ([name, args]) is what the model calls first.
   * Returns the contexts the model received (the first: prompt and tools; the second: the result). */
  async turn(session, text, toolCall = null) {
    const seen = [];
    const capture = (context) => {
      seen.push(structuredClone({ systemPrompt: context.systemPrompt, tools: (context.tools ?? []).map((t) => t.name),
        messages: context.messages }));
      return ai.fauxAssistantMessage('done');
    };
    const first = (context) => {
      capture(context);
      return ai.fauxAssistantMessage(ai.fauxToolCall(toolCall[0], toolCall[1]));
    };
    FAUX.setResponses(toolCall ? [first, capture] : [capture]);
    await session.prompt(text, { expandPromptTemplates: true });
    FAUX.setResponses([]);
    return seen;
  }

  skills() {
    return this.session.resourceLoader.getSkills().skills;
  }

  async discover() {
    await this.session.reload(); // pi's rescan (/reload): settings, then DefaultResourceLoader.reload()
    refreshFaux();
    for (const d of this.session.resourceLoader.getSkills().diagnostics) {
      process.stderr.write(`pi-coding-agent: skill ${d.type}: ${d.message} (${d.path ?? ''})\n`); // pi's own diagnostics, for the stderr tail
    }
    return this.skills().map((s) => kit.loaded(s.name, s.name, s.description, activationBody(s), null, { location: s.filePath }));
  }

  async prompt() {
    const [ctx] = await this.turn(this.session, 'skillspec step');
    const [base] = await this.turn(this.baseline, 'skillspec step');
    return { text: ctx.systemPrompt ?? '', baseline: base.systemPrompt ?? '' };
  }

  async tools() {
    const [ctx] = await this.turn(this.session, 'skillspec step');
    return ctx.tools.map((n) => (n === READ.native ? READ.spec : n));
  }

  async call(tool, args) {
    if (tool === 'activate_skill') return this.activate(args);
    let native = tool;
    let nativeArgs = args;
    if (tool === READ.spec) {
      [native, nativeArgs] = this.readArgs(args);
    }
    const seen = await this.turn(this.session, 'skillspec step', [native, nativeArgs]);
    if (seen.length < 2) throw new kit.AdapterError(`the session ended its turn without running the tool ${native}`);
    const result = seen[1].messages.at(-1);
    if (result?.role !== 'toolResult') throw new kit.AdapterError(`expected a toolResult after the tool call, got ${result?.role}`);
    const text = textOf(result);
    if (result.isError) return ERRORS.error(text);
    if (tool === READ.spec) return kit.ok({ skill: args.skill, path: args.path, content: text });
    return kit.ok({ content: text });
  }

  /** skill_read_reference -> pi's `read`, the path joined to the skill's directory as pi's catalog
   * tells the model (skills.js:269). Only what pi's read can be asked: a skill pi loaded, two strings. */
  readArgs(args) {
    if (args === null || typeof args !== 'object' || Array.isArray(args)
      || typeof args.skill !== 'string' || typeof args.path !== 'string') {
      throw new kit.AdapterError('cannot be expressed: pi\'s read tool takes a file path; the adapter joins a skill\'s '
        + 'directory and a path, and these arguments are not a skill name and a path, both strings');
    }
    const skill = this.skills().find((s) => s.name === args.skill);
    if (!skill) {
      throw new kit.AdapterError(`cannot be expressed: pi loaded no skill named ${JSON.stringify(args.skill)}, so there `
        + 'is no skill directory to read below (pi\'s read tool has no notion of a skill)');
    }
    const { skill: _s, path: rel, ...extra } = args; // extra keys stay extra keys
    return [READ.native, { ...extra, path: `${skill.baseDir}/${rel}` }];
  }

  /** activate_skill -> the user-explicit path `/skill:<name>` (agent-session.js:843-868). */
  async activate(args) {
    const name = args?.name;
    if (args === null || typeof args !== 'object' || Array.isArray(args) || typeof name !== 'string' || /\s/.test(name)) {
      throw new kit.AdapterError('cannot be expressed as `/skill:<name>`: the arguments are not {name: string} '
        + 'or the name holds white space, which ends a skill name there (agent-session.js:846-848)');
    }
    const command = `/skill:${name}`;
    const seen = await this.turn(this.session, command);
    const message = seen[0].messages.at(-1);
    if (message?.role !== 'user') throw new kit.AdapterError(`expected the user message last, got ${message?.role}`);
    const text = textOf(message);
    if (text === command) return ACTIVATION.error(text);
    return kit.ok({ content: text });
  }

  newTurn() {} // every step is already its own turn of the session; pi keeps nothing per turn here
}

/** The text pi hands over for `skill` at activation: its file without frontmatter, trimmed
 * (agent-session.js:855-856); "" when the file cannot be read now. */
function activationBody(skill) {
  try {
    return stripFrontmatter(fs.readFileSync(skill.filePath, 'utf-8')).trim();
  } catch (e) {
    process.stderr.write(`pi adapter: cannot read ${skill.filePath} for its body: ${e.message}\n`);
    return '';
  }
}

await kit.serve(new Pi());
