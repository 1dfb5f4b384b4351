// skillspec adapter for openskills (npm `openskills`, "Universal skills loader for AI coding
// agents"), driven through its published CLI, the surface it documents for agents.
//
// openskills is one bundled file (dist/cli.js) with no exports that runs its command line when
// loaded, so the adapter runs that command line as a child process, one per operation, in a
// project directory of its own (README.md, "How the adapter works"):
//
//   discover  `openskills sync -y -o AGENTS.md` (findAllSkills(), generateSkillsXml()), then
//             `openskills read -- <name>` for each listed skill (readSkill(): its body)
//   tools     the same sync: `skill_read_reference` is offered exactly when the AGENTS.md it
//             writes tells the model to run `openskills read` (openskills has no script runner)
//   prompt    the AGENTS.md sync writes; baseline: the AGENTS.md it writes with no skills dir
//   call      skill_read_reference {skill, path: "SKILL.md"} -> `openskills read -- <skill>`
//
// Dialect `agentskills` (a case whose config.dialect says so; README.md, "Dialect agentskills"):
// the same commands, reported as that dialect's operations: `discover` gives each skill's
// `location` (the `Base directory:` `openskills read` prints, joined with SKILL.md) and no
// `format`; `tools` offers `activate_skill` where it offered skill_read_reference; `call
// activate_skill {name}` runs `openskills read -- <name>` and answers everything it prints (what
// the model receives); `config.user_skills_root` is linked as `~/.agent/skills` of the adapter's
// HOME (the user-level search directory, dist/cli.js:20); `validate` is lacking (no validator).
//
// The adapter maps and never decides: every error code comes from openskills' own message (the
// table ERRORS below, quoted in `message`); a call the CLI cannot express (a path other than
// SKILL.md, arguments that are not two strings) is answered with a protocol error saying so. It
// waits for every command however long it takes (no clock, cap or kill of its own), and a command
// that ends with an error is openskills' answer.
// Nothing touches the case's tree: openskills finds skills only in fixed directories relative to
// its working directory and HOME, so the case's skills root is linked as `.agent/skills` of a
// project directory outside the case root.
import * as kit from '../kit/node/skillspec-kit.mjs'; // first: it takes over stdin and stdout
import { CliError, LACKS, locationOf, parseListing, parseReadBlock, runCli, tail } from './cli.mjs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Where ./install put it (the same rule as the install script).
const INSTALL = path.join(process.env.SKILLSPEC_ADAPTER_CACHE
  || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'skillspec', 'adapters'), 'openskills');
const PACKAGE = path.join(INSTALL, 'node_modules', 'openskills');
const CLI = path.join(PACKAGE, 'dist', 'cli.js');
const VERSION = readVersion();

// openskills' own texts (dist/cli.js line numbers of 1.5.0), first match wins.
const ERRORS = new kit.ErrorMap([
  kit.rule(/^Error: Skill\(s\) not found: /, 'unknown_skill',
    'dist/cli.js:585 readSkill(): findSkill() found no <dir>/<name>/SKILL.md in any search dir'),
  kit.rule(/^Error: No skill names provided/, 'invalid_args',
    'dist/cli.js:571 readSkill(): nothing left of the argument after splitting on "," and trimming',
    { guess: true }),
]);

// The instruction generateSkillsXml() (dist/cli.js:706) gives the model: the read tool exists for
// the model exactly when the AGENTS.md it renders says this.
const READ_INSTRUCTION = '`npx openskills read <skill-name>`';

// The dialect a case names in config.dialect when it is the open standard's (PROTOCOL.md,
// "Dialects"); any other case is Portable Skills, mapped as before.
const AGENTSKILLS = 'agentskills';

function readVersion() {
  try {
    return JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8')).version;
  } catch (e) {
    throw new Error(`openskills is not installed under ${INSTALL} (run runner/adapters/openskills/install): ${e.message}`);
  }
}

/**
 * `fn()`, with a CliError (openskills cannot be started, an unparsable listing) answered as a
 * protocol error. A command that never ends is waited for: openskills gives no answer, so neither
 * does the adapter (the runner's bound reports it; a case that plants a FIFO judges it
 * `unbounded`).
 */
async function asAdapterError(fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof CliError) throw new kit.AdapterError(e.message);
    throw e;
  }
}

const cli = (args, cwd, env) => asAdapterError(() => runCli(CLI, args, cwd, env));

class OpenSkills extends kit.Runtime {
  constructor() {
    super();
    this.name = 'openskills';
    this.version = VERSION;
    this.features = [];
    // No tool_names: openskills' "tool" is the shell command `npx openskills read <name>` that
    // AGENTS.md tells the model to run; it has no tool name a prompt check could look for (a
    // native name "read" would match every use of the word). README.md, "Mapping".
    // What openskills reads and lacks (README.md, "Declarations"): `read <name>` prints
    // `<search dir>/<name>/SKILL.md`, the named skill's own file (findSkill(), readSkill(),
    // dist/cli.js:81-94, 594-601); SKILL.md is the only file openskills reads (dist/cli.js:64-66,
    // 84; no code of 1.5.0 names skill.yml).
    this.readScope = 'skill';
    this.formats = ['skill-md'];
    this.lacks = { ...LACKS };
    // The rule set it claims (README.md, "Dialect agentskills"): the open Agent Skills
    // standard, which its README says it implements
    // ("Implements Anthropic's Agent Skills specification", README.md:308 of the package), in
    // mode lenient: it loads every child directory holding a SKILL.md and checks no field
    // (findAllSkills(), dist/cli.js:54-80; hasValidFrontmatter() only guards `install`).
    // Portable Skills' cases run for information only (`run` passes `--for-information
    // portable-skills`), its hardening cases judged on their exposures.
    this.dialects = [{ name: 'agentskills', version: '2026-08', mode: 'lenient' }];
  }

  startCase(config, root) {
    const written = config.skills_root;
    if (typeof written === 'string' && written !== '' && !path.isAbsolute(written)) {
      // openskills takes no directory setting at all; a relative root cannot be handed to it.
      throw new kit.AdapterError(`openskills has no skills-root setting (it reads ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills); the relative root ${JSON.stringify(written)} has no equivalent`);
    }
    this.agentskills = config.dialect === AGENTSKILLS;
    const user = this.agentskills ? config.user_skills_root : undefined;
    if (typeof user === 'string' && user !== '' && (!path.isAbsolute(user) || Object.prototype.hasOwnProperty.call(config.env ?? {}, 'HOME'))) {
      // openskills' user-level directory is ~/.agent/skills (dist/cli.js:20); the adapter can
      // link it only in a HOME of its own (never in the case's), and only to an absolute root.
      throw new kit.AdapterError(`openskills has no user-skills-root setting (it reads ~/.agent/skills and ~/.claude/skills of HOME); the user root ${JSON.stringify(user)} cannot be linked there (${path.isAbsolute(user) ? "the case's environment sets HOME" : 'a relative root'})`);
    }
    this.work = fs.mkdtempSync(path.join(os.tmpdir(), 'skillspec-openskills-'));
    const home = path.join(this.work, 'home');
    this.project = path.join(this.work, 'project');
    this.empty = path.join(this.work, 'no-skills');
    fs.mkdirSync(this.project);
    fs.mkdirSync(this.empty);
    fs.mkdirSync(home);
    // The adapter's links, search directory -> the root the case gave (for `location`).
    this.links = [];
    if (written) {
      // The project-universal directory, first in getSearchDirs() (dist/cli.js:16-27).
      fs.mkdirSync(path.join(this.project, '.agent'));
      fs.symlinkSync(written, path.join(this.project, '.agent', 'skills'));
      this.links.push([path.join(this.project, '.agent', 'skills'), written]);
    }
    if (typeof user === 'string' && user !== '') {
      // Dialect agentskills: the user-universal directory, second in getSearchDirs()
      // (dist/cli.js:20), in the adapter's own HOME.
      fs.mkdirSync(path.join(home, '.agent'));
      fs.symlinkSync(user, path.join(home, '.agent', 'skills'));
      this.links.push([path.join(home, '.agent', 'skills'), user]);
    }
    // HOME only when the case's environment has none (PROTOCOL.md): an empty one (but for the
    // user link above), so no ~/.agent/skills or ~/.claude/skills of the machine leaks in.
    this.env = kit.runtimeEnv(config, { HOME: home });
  }

  /** `openskills sync -y -o <file>` in `cwd`: the AGENTS.md text it writes. */
  async sync(cwd) {
    const file = path.join(cwd, 'AGENTS.md');
    fs.rmSync(file, { force: true });
    const r = await cli(['sync', '-y', '-o', file], cwd, this.env);
    if (r.code !== 0) {
      // openskills' scan aborted (an uncaught EISDIR/ENXIO on a directory or socket named
      // SKILL.md, or "Cannot create a string longer than 0x1fffffe8 characters" for a 4 GiB
      // one, after however long it read): it refused to scan, in its own words.
      throw new kit.Refused(`\`openskills sync\` exited ${r.code ?? r.signal}: ${tail(r.stderr || r.stdout)}`);
    }
    return fs.readFileSync(file, 'utf8');
  }

  async read(skill) {
    return cli(['read', '--', skill], this.project, this.env);
  }

  async discover() {
    const text = await this.sync(this.project);
    const listing = await asAdapterError(() => parseListing(text));
    const out = [];
    for (const s of listing) {
      const r = await this.read(s.name);
      const block = r.code === 0 ? parseReadBlock(r.stdout) : null;
      if (!block || block.name !== s.name) {
        throw new kit.AdapterError(`openskills lists ${JSON.stringify(s.name)} but \`openskills read\` does not return it alone (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
      }
      out.push(this.agentskills
        // The open standard's record: no `format`; `location` the SKILL.md openskills read.
        ? kit.loaded(s.name, s.name, s.description, block.content, null, { location: locationOf(block.baseDir, this.links) })
        : kit.loaded(s.name, s.name, s.description, block.content, 'portable'));
    }
    return out;
  }

  async tools() {
    // One command, `openskills read <skill-name>`: under dialect agentskills it is the
    // activation (it prints the skill's SKILL.md), under Portable Skills the SKILL.md read.
    const offered = this.agentskills ? 'activate_skill' : 'skill_read_reference';
    return (await this.sync(this.project)).includes(READ_INSTRUCTION) ? [offered] : [];
  }

  async prompt() {
    return { text: await this.sync(this.project), baseline: await this.sync(this.empty) };
  }

  async call(tool, args) {
    if (this.agentskills) return this.activate(tool, args);
    if (tool !== 'skill_read_reference') {
      return kit.error('unknown_tool', { message: `openskills ${VERSION} has no tool ${JSON.stringify(tool)} (its only tool for the model is \`openskills read <skill-name>\`, mapped to skill_read_reference)` });
    }
    const agents = await this.sync(this.project);
    if (!agents.includes(READ_INSTRUCTION)) {
      return kit.error('unknown_tool', { message: `the AGENTS.md openskills renders does not offer ${READ_INSTRUCTION} (no skill listed): ${tail(agents)}` });
    }
    const keys = args !== null && typeof args === 'object' && !Array.isArray(args) ? Object.keys(args).sort() : null;
    if (!keys || keys.join(',') !== 'path,skill' || typeof args.skill !== 'string' || args.path !== 'SKILL.md') {
      throw new kit.AdapterError(`openskills' read command takes only skill names (\`openskills read <skill-names...>\`) and always prints <skill>/SKILL.md: the call ${JSON.stringify(args)} cannot be expressed (only {"skill": <string>, "path": "SKILL.md"} can)`);
    }
    const r = await this.read(args.skill);
    if (r.code === 0) {
      const block = parseReadBlock(r.stdout);
      if (!block) throw new kit.AdapterError(`\`openskills read\` exited 0 with output the adapter cannot parse: ${tail(r.stdout)}`);
      return kit.ok({ skill: args.skill, path: args.path, content: block.content });
    }
    return ERRORS.error(r.stderr.trim() || r.stdout.trim());
  }

  /**
   * Dialect agentskills: `activate_skill {name}` -> `openskills read -- <name>`; `content` is all
   * it prints (the `Reading:` and `Base directory:` lines, the SKILL.md, the `Skill read:` line:
   * what the model running the command receives, readSkill(), dist/cli.js:594-601).
   */
  async activate(tool, args) {
    if (tool !== 'activate_skill') {
      return kit.error('unknown_tool', { message: `openskills ${VERSION} has no tool ${JSON.stringify(tool)} (its only tool for the model is \`openskills read <skill-name>\`, mapped to activate_skill under dialect agentskills)` });
    }
    const agents = await this.sync(this.project);
    if (!agents.includes(READ_INSTRUCTION)) {
      return kit.error('unknown_tool', { message: `the AGENTS.md openskills renders does not offer ${READ_INSTRUCTION} (no skill listed): ${tail(agents)}` });
    }
    const keys = args !== null && typeof args === 'object' && !Array.isArray(args) ? Object.keys(args) : null;
    if (!keys || keys.join(',') !== 'name' || typeof args.name !== 'string') {
      throw new kit.AdapterError(`openskills' read command takes only skill names (\`openskills read <skill-names...>\`): the call ${JSON.stringify(args)} cannot be expressed (only {"name": <string>} can)`);
    }
    const r = await this.read(args.name);
    if (r.code === 0) return kit.ok({ content: r.stdout });
    return ERRORS.error(r.stderr.trim() || r.stdout.trim());
  }

  newTurn() {
    // openskills keeps nothing between commands ("Each skill invocation is stateless").
  }

  endCase() {
    if (!this.work) return;
    // The link first, so that nothing below the case's skills root is ever walked.
    fs.rmSync(path.join(this.project, '.agent', 'skills'), { force: true });
    fs.rmSync(this.work, { recursive: true, force: true });
    this.work = null;
  }
}

await kit.serve(new OpenSkills());
