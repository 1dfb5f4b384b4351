// skillspec adapter for openskills (npm `openskills`, "Universal skills loader for AI coding
// agents"), driven through its published CLI, the surface it documents for agents.
//
// openskills is one bundled file (dist/cli.js) with no exports that runs its command line when
// loaded, so the adapter runs that command line as a child process, one per operation, in a
// project directory of its own (README.md, "How the adapter works"):
//
//   discover  `openskills sync -y -o AGENTS.md` (findAllSkills(), generateSkillsXml()), then
//             `openskills read -- <name>` for each listed skill (readSkill(): the skill's
//             SKILL.md, the text openskills hands the model for it: its body)
//   tools     none: openskills has no tool that reads a skill's files by (skill, path) and no
//             script runner (README.md, "Declarations"); `tools` is always []
//   prompt    the AGENTS.md sync writes; baseline: the AGENTS.md it writes with no skills dir
//   call      unknown_tool for every tool: openskills offers none the suite maps
//
// The adapter maps and never decides: it waits for every command however long it takes (no clock,
// cap or kill of its own), and a command that ends with an error is openskills' answer.
// Nothing touches the case's tree: openskills finds skills only in fixed directories relative to
// its working directory and HOME, so the case's skills root is linked as `.agent/skills` of a
// project directory outside the case root.
import * as kit from '../kit/node/skillspec-kit.mjs'; // first: it takes over stdin and stdout
import { CliError, LACKS, parseListing, parseReadBlock, runCli, tail } from './cli.mjs';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Where ./install put it (the same rule as the install script).
const INSTALL = path.join(process.env.SKILLSPEC_ADAPTER_CACHE
  || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'skillspec', 'adapters'), 'openskills');
const PACKAGE = path.join(INSTALL, 'node_modules', 'openskills');
const CLI = path.join(PACKAGE, 'dist', 'cli.js');
const VERSION = readVersion();

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
    // What openskills reads and lacks (README.md, "Declarations"). It reads SKILL.md only
    // (findAllSkills() and findSkill() join `<dir>/<name>/SKILL.md`, dist/cli.js:63-66, 84; no
    // code of 1.5.0 names skill.yml). No readScope: no reading tool is mapped, and no
    // tool_names: openskills offers no tool the suite maps.
    this.formats = ['skill-md'];
    this.lacks = { ...LACKS };
  }

  startCase(config, root) {
    const written = config.skills_root;
    if (typeof written === 'string' && written !== '' && !path.isAbsolute(written)) {
      // openskills takes no directory setting at all; a relative root cannot be handed to it.
      throw new kit.AdapterError(`openskills has no skills-root setting (it reads ./.agent/skills, ~/.agent/skills, ./.claude/skills, ~/.claude/skills); the relative root ${JSON.stringify(written)} has no equivalent`);
    }
    this.work = fs.mkdtempSync(path.join(os.tmpdir(), 'skillspec-openskills-'));
    this.project = path.join(this.work, 'project');
    this.empty = path.join(this.work, 'no-skills');
    fs.mkdirSync(this.project);
    fs.mkdirSync(this.empty);
    fs.mkdirSync(path.join(this.work, 'home'));
    if (written) {
      // The project-universal directory, first in getSearchDirs() (dist/cli.js:16-27).
      fs.mkdirSync(path.join(this.project, '.agent'));
      fs.symlinkSync(written, path.join(this.project, '.agent', 'skills'));
    }
    // HOME only when the case's environment has none (PROTOCOL.md): an empty one, so no
    // ~/.agent/skills or ~/.claude/skills of the machine leaks in.
    this.env = kit.runtimeEnv(config, { HOME: path.join(this.work, 'home') });
  }

  /** `openskills sync -y -o <file>` in `cwd`: the AGENTS.md text it writes. */
  async sync(cwd) {
    const file = path.join(cwd, 'AGENTS.md');
    fs.rmSync(file, { force: true });
    const r = await cli(['sync', '-y', '-o', file], cwd, this.env);
    if (r.code !== 0) {
      // openskills' scan aborted (an uncaught EISDIR/ENXIO on a directory or socket named
      // SKILL.md): it refused to scan, in its own words.
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
      out.push(kit.loaded(s.name, s.name, s.description, block.content, 'portable'));
    }
    return out;
  }

  tools() {
    // openskills offers the model no tool the suite maps (README.md, "Declarations"): its
    // `openskills read` prints a skill's SKILL.md by name, what `discover` reports as the body.
    return [];
  }

  async prompt() {
    return { text: await this.sync(this.project), baseline: await this.sync(this.empty) };
  }

  call(tool) {
    // Nothing reaches openskills: it has no such tool, so the model's call is a call of a tool it
    // was never offered (PROTOCOL.md: `unknown_tool`). README.md, "Declarations".
    return kit.error('unknown_tool', { message: `openskills ${VERSION} offers no tool ${JSON.stringify(tool)}: its only command for the model, \`npx openskills read <skill-names...>\`, prints the named skills' SKILL.md and takes no path (dist/cli.js:568-603, 1006)` });
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
