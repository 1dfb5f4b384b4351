#!/usr/bin/env node
// The skillspec adapter for the real public sportsclaw engine: npm `sportsclaw-engine-core`
// 0.29.1, installed by ./install into ~/.cache/skillspec/adapters/sportsclaw (README.md next to
// this file maps every protocol operation onto the engine's API).
//
// It translates and adds nothing: the engine has the legacy guide loader (`loadSkillGuides`, run by
// the `sportsclawEngine` constructor), its own system prompt and its own tools, and no skill tool,
// script allowlist or replay guard; so a call of a spec tool is `unknown_tool`, as it is for the
// model. Two things are fixed so that reports are reproducible: the clock (the prompt prints the
// local time) and HOME (the engine reads and creates ~/.sportsclaw at import and construction).
//
//     skillspec run --adapter "node runner/adapters/sportsclaw/adapter.mjs"
import * as kit from '../kit/node/skillspec-kit.mjs'; // first: it takes over stdout before the engine talks
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The instant every `new Date()` and `Date.now()` of this process sees (the prompt prints it). */
export const FROZEN_NOW = Date.UTC(2026, 7, 21, 19, 30, 0); // 2026-08-21T19:30:00Z
/** The user turn the prompt is rendered for (the engine puts it in its "## Current Turn" block). */
export const TURN = Object.freeze({ userPrompt: 'What are the scores today?', hasMemory: false, selectedSkills: [] });
const GUIDES_DIR = 'SPORTSCLAW_SKILL_GUIDES_DIR';
const PACKAGE = 'sportsclaw-engine-core';

// The clock: `new Date()`, `Date()` and `Date.now()` answer FROZEN_NOW; `new Date(x)` is untouched.
const RealDate = Date;
globalThis.Date = new Proxy(RealDate, {
  construct(target, args, newTarget) {
    return Reflect.construct(target, args.length ? args : [FROZEN_NOW], newTarget);
  },
  apply() {
    return new RealDate(FROZEN_NOW).toString();
  },
  get(target, key, receiver) {
    return key === 'now' ? () => FROZEN_NOW : Reflect.get(target, key, receiver);
  },
});

// Where ./install put the engine (resolved before HOME is replaced below).
const installed = path.join(process.env.SKILLSPEC_ADAPTER_CACHE
  || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'skillspec', 'adapters'),
'sportsclaw', 'node_modules', PACKAGE);
if (!fs.existsSync(path.join(installed, 'dist', 'engine.js'))) {
  throw new Error(`sportsclaw adapter: ${installed} is missing: run runner/adapters/sportsclaw/install first`);
}

// HOME: the engine resolves ~/.sportsclaw when its modules load (agents, config, MCP servers) and
// when it is constructed (schemas), and creates empty directories there. A fresh empty one per
// adapter process keeps the operator's real configuration out of the report; it is removed at
// exit. A process killed for a hang cannot remove it: ./run gives the adapters a directory of
// their own for these (SKILLSPEC_SPORTSCLAW_TMP) and removes it after the run.
const home = fs.mkdtempSync(path.join(process.env.SKILLSPEC_SPORTSCLAW_TMP || os.tmpdir(), 'skillspec-sportsclaw-home-'));
process.env.HOME = home;
process.on('exit', () => fs.rmSync(home, { recursive: true, force: true }));

const { version } = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
const engineModule = (file) => import(pathToFileURL(path.join(installed, 'dist', file)).href);
const { sportsclawEngine } = await engineModule('engine.js');
const { getBuiltInSkillGuides } = await engineModule('prompts/built-in-guides.js');
const { getInstalledVsAvailable } = await engineModule('schema.js');

/**
 * The guides of the skills root the prompt shows, in its order: the engine's own resolution
 * (dist/prompts/system.js resolveSkillGuides, lines 253-266, not exported): built-in guides for
 * the active skills (the turn's selected skills and the installed sports, as buildSystemPrompt
 * gathers them, dist/engine.js:419,442), then the loaded disk guides, into one Map by id, so a
 * later guide with an id already there replaces the earlier one in its place. Of the result,
 * the disk guides (the objects `loadSkillGuides` returned) are the ones from the skills root.
 */
export function shownGuides(diskGuides, selectedSkills, installedSports) {
  const byId = new Map();
  for (const g of getBuiltInSkillGuides(new Set([...selectedSkills, ...installedSports]))) byId.set(g.id, g);
  for (const g of diskGuides) byId.set(g.id, g);
  const fromRoot = new Set(diskGuides);
  return Array.from(byId.values()).filter((g) => fromRoot.has(g));
}

/** Replace this process's environment (the in-process runtime's) by `env`, keeping nothing else. */
function setEnvironment(env) {
  for (const key of Object.keys(process.env)) if (!Object.prototype.hasOwnProperty.call(env, key)) delete process.env[key];
  for (const [key, value] of Object.entries(env)) process.env[key] = value;
}

/** The same engine built with `SPORTSCLAW_SKILL_GUIDES_DIR` unset (the prompt's baseline). */
function withoutGuidesDir(build) {
  const saved = process.env[GUIDES_DIR];
  delete process.env[GUIDES_DIR];
  try {
    return build();
  } finally {
    if (saved !== undefined) process.env[GUIDES_DIR] = saved;
  }
}

await kit.serve({
  name: PACKAGE,
  version,
  features: [], // no operator tool allowlist, no skip report, no platform emulation
  processPerCase: false, // everything read per case (environment, guides, ~/.sportsclaw) is read at call time
  // What the engine reads and lacks (README.md, "Declarations"). It reads the legacy pair only: a
  // directory is a guide when it holds both skill.yml and SKILL.md, skill.yml read by its own line
  // parser and SKILL.md as the body, never as frontmatter (dist/skill-guides.js:58-71). No
  // readScope: it has no reading tool.
  formats: ['skill-yml'],
  lacks: {
    skill_read_reference: 'sportsclaw-engine-core 0.29.1 has no skill tool: its tool map is the registry\'s tool specs '
      + '(dist/engine.js:798-808), none of which reads a guide\'s files; guides reach the model only through the '
      + 'system prompt (dist/engine.js:437).',
    skill_run_script: 'sportsclaw-engine-core 0.29.1 has no skill script tool: its tool map is the registry\'s tool '
      + 'specs (dist/engine.js:798-808), none of which runs a guide\'s helper, and no code of it names one.',
  },

  startCase(config) {
    // The runtime's environment is config.env; the settings it reads from the environment are
    // added as a host's launcher would set them (the engine reads only the guides directory).
    const env = kit.runtimeEnv(config, { HOME: home });
    delete env[GUIDES_DIR];
    if (config.skills_root !== null) env[GUIDES_DIR] = config.skills_root;
    if (config.replay !== null) env.SPORTS_SKILLS_REPLAY = config.replay;
    if (config.timeout_ms !== null) env.SKILL_SCRIPT_TIMEOUT_MS = config.timeout_ms;
    setEnvironment(env);
    this.options = { allowTrading: config.allow_trading, pythonPath: config.python };
    this.failed = new Map();
    this.build();
  },

  /** A new engine: its constructor scans the guides directory (loadSkillGuides), as at start-up. */
  build() {
    this.engine = new sportsclawEngine(this.options);
    this.offered = this.engine.buildTools(undefined, this.failed, undefined, undefined, undefined);
  },

  discover() {
    // The engine scans only when it is constructed; a rescan is a new engine (a host restart).
    this.build();
    // What the model is shown, not the loader's raw list: the prompt keeps one guide per id
    // (the later one) and the engine uses no other copy (README.md, "Duplicate ids").
    const { installed: sports } = getInstalledVsAvailable();
    return shownGuides(this.engine.skillGuides, TURN.selectedSkills, sports)
      .map((g) => kit.loaded(g.id, g.name, g.description, g.body, 'legacy'));
  },

  tools() {
    return Object.keys(this.offered);
  },

  prompt() {
    const baseline = withoutGuidesDir(() => new sportsclawEngine(this.options)).buildSystemPrompt(TURN);
    return { text: this.engine.buildSystemPrompt(TURN), baseline };
  },

  call(tool) {
    if (!Object.prototype.hasOwnProperty.call(this.offered, tool)) {
      // The AI SDK refuses a tool call whose name is not in the engine's tool map before any
      // engine code runs; the engine has no skill tool.
      return kit.error('unknown_tool', { message: `the engine offers no tool named ${JSON.stringify(tool)}` });
    }
    throw new kit.AdapterError(`not translated: ${tool} is one of the engine's own tools (it runs the Python bridge, `
      + 'a shell, the network or writes ~/.sportsclaw); the suite calls only the spec\'s tools');
  },

  newTurn() {
    // What engine.run() does for each turn: a fresh tool map with a fresh failed-call memory.
    this.failed = new Map();
    this.offered = this.engine.buildTools(undefined, this.failed, undefined, undefined, undefined);
  },
});
