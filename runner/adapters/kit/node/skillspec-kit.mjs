/**
 * skillspec adapter kit for Node.js: the whole adapter protocol (PROTOCOL.md, version 2), so that
 * an adapter only makes the calls into its runtime.
 *
 * No dependencies, Node 18 or later, one ES module: copy it next to your adapter. An adapter is
 * an object (or a class instance, or a subclass of {@link Runtime}) handed to {@link serve}:
 *
 *     import * as kit from './skillspec-kit.mjs';   // first: it takes over stdin and stdout
 *     import { Host } from 'my-runtime';
 *
 *     await kit.serve({
 *       name: 'my-runtime', version: '1.0.0',
 *       startCase(config, root) { this.host = new Host({ skillsDir: config.skills_root }); },
 *       discover() { return this.host.rescan().map(s => kit.loaded(s.id, s.name, s.description, s.body)); },
 *       ...
 *     });
 *
 * What the kit owns, so that an adapter cannot get it wrong:
 *
 * - The conversation: the handshake (`start` → `started`; another protocol version is answered
 *   with `error`), `case_start` / `step` / `case_end` / `stop`, `seq` and `index` echoed,
 *   exactly one response line per request, in order, each method awaited before the next
 *   request is read.
 * - The transport: requests are read as whole lines of up to {@link MAX_REQUEST} (64 MiB) and
 *   must be UTF-8 JSON objects (anything else is answered with `error`; a longer line is
 *   discarded as it arrives, never held, and answered with `error`); responses are strict UTF-8
 *   JSON (a lone surrogate, NaN, a BigInt, a Map or a cycle becomes an `error` response naming
 *   where it was, never a broken or silently changed line) and at most 16 MiB. A `case_start`
 *   whose `config` has a field of the wrong type is answered with `error` naming the field.
 * - stdout and stdin: when they are pipes (as the runner starts adapters), evaluating this module
 *   reopens them for the protocol (close-on-exec, so no child process inherits them) and points
 *   file descriptor 1 at stderr and descriptor 0 at /dev/null; always, `process.stdout.write`
 *   (and so `console.log`) is sent to stderr and `process.exit` is refused. Whatever the runtime
 *   prints, logs or lets a child write to its stdout lands on stderr. Import the kit before the
 *   runtime. The one extra descriptor the runner leaves open (PROTOCOL.md) is left alone: not
 *   letting helpers inherit it is the runtime's job, and a case checks it.
 * - Failures: anything a method throws (or rejects with) becomes an `error` response naming the
 *   method and the exception; the stack goes to stderr and the adapter goes on. An uncaught
 *   exception or unhandled rejection in the runtime's background work is logged, not fatal. A
 *   result of the wrong shape is answered with an `error` saying what was expected.
 * - Honest defaults: a method the adapter leaves out answers `error` ("not implemented"), except
 *   `call` (`unknown_tool`: a runtime without the tool offers none), `startCase` and `endCase`
 *   (nothing to build or release). No result is ever invented.
 *
 * Error codes: {@link ErrorMap} translates a runtime's own error messages into the codes of
 * SPEC.md through an explicit table whose guesses are marked, and every translated error says in
 * its `message` which rule produced it (messages are shown in reports, never compared).
 *
 * An adapter maps, it never decides (PROTOCOL.md, "Mapping a runtime's own tools"): every
 * refusal it returns comes from a signal of the runtime (an exception, a return value, a
 * message), and the runtime's own text travels with it: {@link refusal} (a code), `throw new`
 * {@link Refused} (the runtime refused the whole step, or to start), {@link ErrorMap#error}. An
 * adapter never checks a path, an argument or an approval itself. {@link MappedTool} renames a
 * tool's arguments and results for a runtime whose tools have other names or shapes (declare the
 * names as `toolNames`); {@link timeoutMs} reads the timeout setting for a runtime that takes it
 * in other units.
 *
 * Dialects (PROTOCOL.md, "Dialects"): a runtime of another rule set than portable-skills (the open
 * Agent Skills standard, `agentskills`) claims it as `dialects`, reports each skill's `location`
 * in {@link loaded}, and, if it has a validator, answers the `validate` step in `validate(path)`
 * ({@link validation}); `config.dialect` and `config.user_skills_root` are the case's dialect and
 * user-level skills directory.
 *
 * @module skillspec-kit
 */

import fs from 'node:fs';
import net from 'node:net';

/** The protocol version this kit speaks. */
export const PROTOCOL_VERSION = 2;
/** Longest response line the runner accepts (bytes, without the newline). */
export const MAX_LINE = 16 * 1024 * 1024;
/** The request line limit when SKILLSPEC_KIT_MAX_REQUEST does not lower it. */
export const DEFAULT_MAX_REQUEST = 64 * 1024 * 1024;
/**
 * Longest request line the kit takes (bytes, without the newline): 64 MiB, four times the longest
 * line the runner sends (16 MiB, PROTOCOL.md "Transport"). A longer line is discarded as it
 * streams in, never held whole, then answered with an `error`: a runaway writer on stdin cannot
 * make the adapter take more memory than this. SKILLSPEC_KIT_MAX_REQUEST (a number of bytes,
 * read once when the kit is evaluated) sets it, for the kit's own tests only, which check the
 * behaviour at the limit without pushing 64 MiB through a pipe.
 */
export const MAX_REQUEST = (() => {
  const text = process.env.SKILLSPEC_KIT_MAX_REQUEST;
  if (text === undefined) return DEFAULT_MAX_REQUEST;
  if (/^[0-9]+$/.test(text) && Number(text) > 0) return Number(text);
  try {
    fs.writeSync(2, `skillspec-kit: SKILLSPEC_KIT_MAX_REQUEST=${JSON.stringify(text)} is not a positive number of bytes; the limit stays ${DEFAULT_MAX_REQUEST}\n`);
  } catch { /* stderr is gone */ }
  return DEFAULT_MAX_REQUEST;
})();
/** Feature names the runner knows (PROTOCOL.md); declare only what the runtime really does. */
export const FEATURES = Object.freeze(['tool-allowlist', 'skip-report', 'platform-emulation', 'selection', 'trust', 'hitl']);
/** The tools of the specification: the keys `toolNames` may have (`activate_skill` is dialect
 * `agentskills`'s activation). */
export const SPEC_TOOLS = Object.freeze([
  'skill_read_reference', 'skill_run_script', 'skill_list', 'skill_install', 'skill_remove',
  'read_skill', 'read_skill_file', 'run_skill_script', 'activate_skill',
]);
/** What the runtime's file-reading tool may return by design (the adapter's `readScope`). */
export const READ_SCOPES = Object.freeze(['skill', 'skills-root', 'case-root']);
/** The skill file formats a runtime may read (the adapter's `formats`). */
export const SKILL_FORMATS = Object.freeze(['skill-md', 'skill-yml']);
/** The mechanisms a runtime may lack (the keys of the adapter's `lacks`). */
export const MECHANISMS = Object.freeze([
  'skill_read_reference', 'skill_run_script', 'nested-scan', 'argument-keys',
  'scan', 'validate', 'activate_skill',
]);
/** Longest reason `lacks` may give (bytes of UTF-8); the runner keeps no more. */
export const MAX_REASON = 4096;
/**
 * The dialects the runner knows (PROTOCOL.md, "Dialects"), each with its modes: a claim of one of
 * them in the adapter's `dialects` gives a `mode` exactly when it has modes, and one of them. A
 * name (or version) the runner does not know is kept and shown; no case runs for it.
 */
export const DIALECTS = Object.freeze({
  'portable-skills': Object.freeze([]),
  agentskills: Object.freeze(['strict', 'lenient']),
});
/** Longest `name` or `version` of a dialect claim (bytes of UTF-8), as the runner takes it. */
export const MAX_CLAIM = 64;

/** Reasons a `skipped` entry may give (SPEC.md, discovery). */
export const SKIP_REASONS = Object.freeze([
  'duplicate', 'symlink', 'too_deep', 'too_large', 'not_regular',
  'not_utf8', 'bad_name', 'malformed', 'incomplete', 'unreadable',
]);
const FORMATS = ['portable', 'legacy'];

/**
 * The runtime configuration of one case, exactly as PROTOCOL.md's `case_start` sends it.
 * @typedef {object} Config
 * @property {string|null} skills_root the skills root (`SPORTSCLAW_SKILL_GUIDES_DIR`); null: unset, the feature is off; as an operator wrote it (may be empty or relative)
 * @property {string|null} script_allowlist the operator's script allowlist text, verbatim (may be malformed on purpose)
 * @property {string[]|null} tool_allowlist tools the operator allows; null: all
 * @property {boolean} allow_trading the trading blocklist is lifted
 * @property {string|null} replay `SPORTS_SKILLS_REPLAY` as the runtime sees it
 * @property {string|null} timeout_ms `SKILL_SCRIPT_TIMEOUT_MS` as text (valid or not)
 * @property {string} python the configured interpreter exactly as written: pass it through unchanged
 * @property {Object<string,string>} env the runtime's whole process environment
 * @property {string|null} [platform] `"no-process-groups"` (feature `platform-emulation` only)
 * @property {string} [dialect] the case's dialect (PROTOCOL.md, "Dialects"), sent only when it is not portable-skills; a runtime that claims several applies that one's rules
 * @property {string} [user_skills_root] dialect `agentskills`: the user-level skills directory, absolute (absent: none; `skills_root` is the project's)
 */

/** @typedef {{id: string, format?: 'portable'|'legacy', name: string, description: string, body: string, location?: string}} LoadedEntry */
/** @typedef {{path: string, reason: string}} SkippedEntry */
/** @typedef {{ok: true, value: object} | {ok: false, error: {code: string, [field: string]: any}}} CallResult */
/** @typedef {{valid: boolean, problems: string[], properties?: object}} Validation */
/** @typedef {{name: string, version: string, mode?: string}} DialectClaim */

/**
 * What an adapter implements. Every method may be async; the kit awaits it before reading the
 * next request. Anything a method throws is answered with a protocol `error`; a tool's own
 * failure is a *result* ({@link error}), not an exception. The kit calls `startCase` once per
 * case, one method per step, then `endCase` (also after a `startCase` that threw, and when the
 * runner stops the adapter or closes its stdin in the middle of a case).
 *
 * @typedef {object} RuntimeAdapter
 * @property {string} name the runtime's name, shown in reports
 * @property {string} version the runtime's version
 * @property {string} [language] default `"javascript"`
 * @property {string[]} [features] optional features the runtime really has, from {@link FEATURES}
 * @property {boolean} [processPerCase] the runtime caches state at import: the runner starts a fresh adapter process for every case
 * @property {boolean} [sideBySide] false: two processes of the adapter cannot run at once
 * @property {Object<string,string>} [toolNames] spec tool name -> the runtime's own name
 * @property {'skill'|'skills-root'|'case-root'|null} [readScope] what the runtime's file-reading tool returns by design (null: `skill`, not sent)
 * @property {Array<'skill-md'|'skill-yml'>|null} [formats] the skill file formats the runtime reads (null: both, not sent)
 * @property {Object<string,string>} [lacks] mechanism from {@link MECHANISMS} -> why the runtime does not have it (sent when not empty)
 * @property {DialectClaim[]|null} [dialects] the dialects the runtime claims, each name once, a `mode` exactly for a dialect of {@link DIALECTS} with modes (null: portable-skills 1, not sent)
 * @property {(config: Config, root: string) => void|Promise<void>} [startCase] start a fresh runtime for the case (root: the case's temporary directory); it scans the skills root now, as a host does at start-up
 * @property {() => Array<LoadedEntry|SkippedEntry>|Promise<Array<LoadedEntry|SkippedEntry>>} [discover] scan again: {@link loaded} entries in the runtime's order, {@link skipped} ones (sent only with `skip-report`)
 * @property {() => string[]|Promise<string[]>} [tools] names of the tools offered to the model
 * @property {() => {text: string, baseline: string}|Promise<{text: string, baseline: string}>} [prompt] the system prompt, and the one the same runtime renders without the portable-skills feature
 * @property {(tool: string, args: any) => CallResult|Promise<CallResult>} [call] call a tool through the runtime's normal pipeline, args exactly as given (any JSON value)
 * @property {() => void|Promise<void>} [newTurn] start a new turn (a runtime that keeps nothing per turn implements it as a no-op)
 * @property {(path: string) => Validation|Promise<Validation>} [validate] dialect `agentskills`: the runtime's validator on one skill directory (path relative to the case root): {@link validation}
 * @property {() => void|Promise<void>} [endCase] release the case's runtime (processes, temporary files)
 */

// ------------------------------------------------------------------------------------------
// Result helpers

/**
 * One loaded skill, for the array `discover` returns. Dialect `agentskills` (PROTOCOL.md,
 * "Dialects"): `id` is the skill's `name`, `extra` `{ location: '/abs/.../SKILL.md' }` the
 * absolute path of its SKILL.md, and `format` null leaves `format` out (it is not sent there).
 * @param {string} id the skill directory's name
 * @param {string} name @param {string} description @param {string} body as the runtime loaded them
 * @param {'portable'|'legacy'|null} [format] `portable` (SKILL.md frontmatter) or `legacy` (skill.yml beside SKILL.md); null: not sent
 * @param {object} [extra] further fields, passed through (the runner ignores those it does not know)
 * @returns {LoadedEntry}
 */
export function loaded(id, name, description, body, format = 'portable', extra = {}) {
  const entry = { id, format, name, description, body, ...extra };
  if (format === null && !('format' in extra)) delete entry.format;
  return entry;
}

/**
 * One path the scan skipped: relative to the skills root, with a reason from {@link SKIP_REASONS}.
 * Sent only when the runtime declares `skip-report`; dropped otherwise.
 * @returns {SkippedEntry}
 */
export function skipped(path, reason, extra = {}) {
  return { path, reason, ...extra };
}

/**
 * Dialect `agentskills`: the result `validate` returns, the validator's own verdict (`valid`,
 * never derived by the adapter), its `problems` in its own words (never compared) and the
 * `properties` it read (`name`, `description`, `license`, `compatibility`, `allowed-tools`,
 * `metadata`); null leaves `properties` out, for a validator that read none (PROTOCOL.md,
 * "Dialects").
 * @param {boolean} valid @param {string[]} problems @param {object|null} [properties] @returns {Validation}
 */
export function validation(valid, problems, properties = null) {
  return { valid, problems: [...problems], ...(properties === null ? {} : { properties: { ...properties } }) };
}

/** A successful tool call: `value` is the tool's result object (SPEC.md gives its fields). @returns {CallResult} */
export function ok(value) {
  return { ok: true, value };
}

/**
 * A tool call that failed: `code` from SPEC.md (`not_found`, `not_approved`, ...) and the fields
 * SPEC.md gives it (`exit_code`, `stderr`, `approved_scripts`, `hint`); `message` is free text,
 * shown in reports and never compared.
 * @param {string} code @param {object} [fields] @returns {CallResult}
 */
export function error(code, fields = {}) {
  return { ok: false, error: { code, ...fields } };
}

/** The runtime's own text of a refusal: a string as is, an Error as `"Name: message"`; an empty
 * one throws: an adapter maps a runtime's signal, it never decides on its own. */
function runtimeText(runtimeMessage, what) {
  const text = runtimeMessage instanceof Error ? `${runtimeMessage.name}: ${runtimeMessage.message}`
    : typeof runtimeMessage === 'string' ? runtimeMessage : '';
  if (!text.trim()) {
    throw new TypeError(`${what} needs the runtime's own message (an Error or its text), got ${describe(runtimeMessage)}: an adapter maps a runtime's signal, it never decides`);
  }
  return text;
}

/**
 * A tool call the *runtime* refused, mapped to `code`: `runtimeMessage` is the signal it gave
 * (the Error it threw, or the text it returned or logged) and becomes `message`, so the report
 * shows what the runtime said. Throws without one: an adapter maps, it never decides
 * (PROTOCOL.md). For a table of many texts use {@link ErrorMap}.
 * @param {string} code @param {Error|string} runtimeMessage @param {object} [fields] @returns {CallResult}
 */
export function refusal(code, runtimeMessage, fields = {}) {
  if (typeof code !== 'string' || !code) throw new TypeError(`refusal() needs a code from SPEC.md, got ${describe(code)}`);
  if ('message' in fields) throw new TypeError("refusal(): the message is the runtime's (runtimeMessage), not a field");
  return error(code, { message: runtimeText(runtimeMessage, 'refusal()'), ...fields });
}

/**
 * `value` with the keys in `names` renamed (old → new), every other key kept; anything but a
 * plain object is returned unchanged. The runtime must still see what the spec's shape does not
 * allow (an extra key, a non-object), so that its own checks are the ones tested.
 */
export function renameKeys(value, names) {
  if (!isPlainObject(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [Object.prototype.hasOwnProperty.call(names, k) ? names[k] : k, v]));
}

/**
 * A tool of the specification mapped onto the runtime's own tool of another name or shape:
 *
 *     const READ = new kit.MappedTool('skill_read_reference', 'read_skill_resource', {
 *       args: { skill: 'skill_name', path: 'resource_name' },
 *       result: { skill_name: 'skill', resource_name: 'path', text: 'content' } });
 *     ...
 *     return kit.ok(READ.specValue(await host.call(READ.native, READ.nativeArgs(args))));
 *
 * `args` renames argument keys (spec → native), `result` result keys (native → spec); other keys
 * pass unchanged, a non-object as it is. `reshape(args)` reshapes what `nativeArgs` returns
 * further (script `args` as a mapping, say); it must not drop or repair what the spec's shape
 * does not allow. Declare the names as the adapter's `toolNames` ({@link MappedTool.names}).
 */
export class MappedTool {
  constructor(spec, native, { args = {}, result = {}, reshape = null } = {}) {
    if (!SPEC_TOOLS.includes(spec)) throw new TypeError(`MappedTool: ${describe(spec)} is not a tool of the specification (${SPEC_TOOLS.join(', ')})`);
    if (typeof native !== 'string' || !native) throw new TypeError(`MappedTool: the runtime's name of ${spec} must be a non-empty string`);
    Object.assign(this, { spec, native, args: { ...args }, result: { ...result }, reshape });
    Object.freeze(this);
  }

  /** The spec's arguments as the runtime's tool takes them. */
  nativeArgs(args) {
    const out = renameKeys(args, this.args);
    return this.reshape ? this.reshape(out) : out;
  }

  /** The runtime's result as the spec's value (for {@link ok}). */
  specValue(value) {
    return renameKeys({ ...value }, this.result);
  }

  /** `{spec name: native name}` of `tools`, for the adapter's `toolNames`. */
  static names(...tools) {
    return Object.fromEntries(tools.map((t) => [t.spec, t.native]));
  }
}

/** The default script time limit (SPEC.md `run.timeout`), ms. */
export const DEFAULT_TIMEOUT_MS = 30000;

/**
 * The script time limit in milliseconds that `config.timeout_ms` (the text of
 * `SKILL_SCRIPT_TIMEOUT_MS`) means under SPEC.md `run.timeout`: ASCII digits only, 1 to
 * 86,400,000; anything else (null, empty, `0`, `-5`, `1.5`, `1e3`, ` 300`) is the default,
 * 30,000. For a runtime that takes its timeout in other units: convert this (`timeoutMs(...) /
 * 1000` seconds), and say in the adapter's README that the `run.timeout.*` cases then test this
 * conversion, not the runtime.
 * @param {string|null|undefined} setting @returns {number}
 */
export function timeoutMs(setting) {
  if (typeof setting !== 'string' || !/^[0-9]+$/.test(setting)) return DEFAULT_TIMEOUT_MS;
  const value = Number(setting);
  return value >= 1 && value <= 86400000 ? value : DEFAULT_TIMEOUT_MS;
}

// ------------------------------------------------------------------------------------------
// Errors an adapter throws on purpose

/**
 * Throw it when the *runtime* refused a whole step or to start, with what it said:
 *
 *     startCase(config) {
 *       try { this.host = new Host(config.skills_root); }
 *       catch (e) { throw new kit.Refused(e); }     // it will not start without its root
 *     }
 *
 * From `startCase`, the case is answered `case_started` with `refused` (the runner then judges
 * every step of it refused and sends none; `endCase` still follows); from a step method, the step
 * is answered with `refused` in place of a result (a scan aborted by a FIFO `SKILL.md`, a call
 * rejected before any tool ran). The runner judges it a safe refusal (PROTOCOL.md, "Refusals").
 * `runtimeMessage` is the runtime's Error or its text; an empty one throws.
 */
export class Refused extends Error {
  constructor(runtimeMessage) {
    const text = runtimeText(runtimeMessage, 'Refused');
    super(text);
    this.name = 'Refused';
  }
}

/** Throw to answer the current request with a protocol `error` carrying this message (no stack):
 * the adapter cannot do what was asked. The case is reported ERROR and the run goes on. */
export class AdapterError extends Error {
  constructor(message) { super(message); this.name = 'AdapterError'; }
}

/** Thrown by {@link ErrorMap#error} for a runtime error no rule matches (and no default): answered
 * with a protocol `error` quoting the runtime's text, so the gap in the table shows in the report. */
export class Unmapped extends Error {
  constructor(text) { super(text); this.name = 'Unmapped'; this.text = text; }
}

class NotImplemented extends Error {}

// ------------------------------------------------------------------------------------------
// Translating a runtime's errors into codes

/**
 * A mapping rule: a runtime error whose text matches `pattern` (a RegExp or a string compiled to
 * one; for an Error the text is `"Name: message"`) gets `code`. `why` says where the rule comes
 * from; `guess: true` marks a rule that is not certain (the runtime says the same thing for two
 * situations the spec tells apart, or the wording was inferred): every error it produces says so
 * in its message and {@link ErrorMap#table} lists it as a guess. `fields(match)` may add result
 * fields, e.g. `m => ({ exit_code: Number(m.groups.status) })`.
 * @param {RegExp|string} pattern @param {string} code @param {string} [why]
 * @param {{guess?: boolean, fields?: (m: RegExpExecArray) => object}} [options]
 */
export function rule(pattern, code, why = '', { guess = false, fields = null } = {}) {
  const re = pattern instanceof RegExp ? pattern : new RegExp(pattern);
  return Object.freeze({ pattern: new RegExp(re.source, re.flags.replace(/[gy]/g, '')), code, why, guess, fields });
}

/**
 * An explicit, ordered table from a runtime's error texts to SPEC.md's codes; the first matching
 * rule wins:
 *
 *     const ERRORS = new kit.ErrorMap([
 *       kit.rule(/^Unknown skill/, 'unknown_skill', 'tools.ts throws it for a missing id'),
 *       kit.rule(/outside the skill/, 'invalid_path', 'one message for every path rule', { guess: true }),
 *     ]);
 *     ...
 *     catch (e) { return ERRORS.error(e); }
 *
 * `options.default`: the code of a text no rule matches. Leave it unset and such a text throws
 * {@link Unmapped}, which the kit answers with a protocol `error`: an unknown message is a gap in
 * the table, not something to guess silently.
 */
export class ErrorMap {
  /** @param {ReturnType<typeof rule>[]} rules @param {{default?: string|null}} [options] */
  constructor(rules, options = {}) {
    if (!Array.isArray(rules) || !rules.every((r) => r && r.pattern instanceof RegExp && typeof r.code === 'string')) {
      throw new TypeError('ErrorMap takes an array of rules made with rule(pattern, code, ...)');
    }
    this.rules = Object.freeze([...rules]);
    this.default = options.default ?? null;
  }

  /** The text rules are matched against: a string as is, an Error as `"Name: message"`. */
  static textOf(failure) {
    if (failure instanceof Error) return `${failure.name}: ${failure.message}`;
    return String(failure);
  }

  /** The first rule matching `failure` as `{number, rule, match}` (numbered from 1), or null. */
  match(failure) {
    const text = ErrorMap.textOf(failure);
    for (let i = 0; i < this.rules.length; i++) {
      const m = this.rules[i].pattern.exec(text);
      if (m) return { number: i + 1, rule: this.rules[i], match: m };
    }
    return null;
  }

  /** The code `failure` maps to, or the default (null when there is none). */
  code(failure) {
    const found = this.match(failure);
    return found ? found.rule.code : this.default;
  }

  /**
   * The `error(...)` result for `failure`: its code from the table, `fields` plus those of the
   * rule, and a `message` quoting the runtime's text and naming the rule (marked GUESS when it
   * is one). Throws {@link Unmapped} when nothing matches and there is no default.
   * @returns {CallResult}
   */
  error(failure, fields = {}) {
    const text = ErrorMap.textOf(failure);
    const found = this.match(failure);
    if (!found) {
      if (this.default === null) throw new Unmapped(text);
      return error(this.default, { message: `${text} [skillspec-kit: no rule matched; the default code '${this.default}']`, ...fields });
    }
    const { number, rule: r, match } = found;
    const note = `[skillspec-kit: rule ${number} ${r.pattern} -> ${r.code}${r.guess ? ` (GUESS: ${r.why || 'not certain'})` : ''}]`;
    return error(r.code, { message: `${text} ${note}`, ...(r.fields ? r.fields(match) : {}), ...fields });
  }

  /** The table as Markdown, for the adapter's README (guesses marked). */
  table() {
    const esc = (s) => String(s).replace(/\|/g, '\\|');
    const rows = ['| # | runtime text (regex) | code | certain? | why |', '|---|---|---|---|---|'];
    this.rules.forEach((r, i) => rows.push(`| ${i + 1} | \`${esc(r.pattern)}\` | \`${r.code}\` | ${r.guess ? 'GUESS' : 'yes'} | ${esc(r.why)} |`));
    rows.push(`| - | anything else | ${this.default ? `\`${this.default}\`` : 'protocol `error` (unmapped)'} | | |`);
    return rows.join('\n');
  }
}

/**
 * `config.env` plus the variables in `add` that it does not set: what PROTOCOL.md allows an
 * adapter to add so that its runtime can start (a `HOME`, say). A variable `env` sets is never
 * changed, and `PATH` is never added (throws).
 * @param {Config} config @param {Object<string,string>} [add] @returns {Object<string,string>}
 */
export function runtimeEnv(config, add = {}) {
  const out = { ...config.env };
  for (const [key, value] of Object.entries(add)) {
    if (Object.prototype.hasOwnProperty.call(out, key)) continue;
    if (key === 'PATH') throw new Error("an adapter must not add PATH to the runtime's environment (PROTOCOL.md)");
    out[key] = value;
  }
  return out;
}

// ------------------------------------------------------------------------------------------
// The interface, as a base class with the honest defaults

/** A base class with the defaults; extending it is optional (a plain object works the same). */
export class Runtime {
  constructor() {
    this.name = undefined; // set both: the handshake refuses a runtime without them
    this.version = undefined;
    this.language = 'javascript';
    this.features = [];
    this.processPerCase = false;
    this.sideBySide = true; // false: two processes cannot run at once (PROTOCOL.md, side_by_side)
    this.toolNames = {}; // spec tool name -> the runtime's own name (PROTOCOL.md, tool_names)
    // What the runtime's file-reading tool returns by design: 'skill' (only files inside the
    // skill's own directory, what the specification requires), 'skills-root' (any file below the
    // skills root) or 'case-root' (any file below its workspace, rooted at the case root). A
    // canary read inside that scope is then not a crossing of a boundary the runtime claims.
    // null: 'skill', not sent.
    this.readScope = null;
    // The skill file formats it reads, from SKILL_FORMATS, each once (['skill-md']: it never
    // reads skill.yml, whose cases are then UNSUPPORTED). null: both, not sent.
    this.formats = null;
    // The mechanisms it does not have (keys from MECHANISMS), each with what its docs or code
    // show: a case that passes while one it exercises is lacking is "not exercised", not passed.
    // Dialect agentskills's operations (`scan`, `validate`, `activate_skill`) gate instead: a
    // case that needs one the runtime lacks is UNSUPPORTED, never sent.
    this.lacks = {};
    // The dialects it claims (PROTOCOL.md, "Dialects"), e.g.
    // [{ name: 'agentskills', version: '2026-08', mode: 'strict' }]; null: portable-skills 1,
    // not sent.
    this.dialects = null;
  }
  startCase(config, root) {} // eslint-disable-line no-unused-vars
  discover() { throw new NotImplemented('discover() is not implemented by this adapter'); }
  tools() { throw new NotImplemented('tools() is not implemented by this adapter'); }
  prompt() { throw new NotImplemented('prompt() is not implemented by this adapter'); }
  call(tool, args) { // eslint-disable-line no-unused-vars
    return error('unknown_tool', { message: 'this adapter implements no tool calls (call() is not implemented)' });
  }
  newTurn() {
    throw new NotImplemented('newTurn() is not implemented by this adapter (a runtime that keeps nothing per turn implements it as a no-op)');
  }
  validate(path) { // eslint-disable-line no-unused-vars
    throw new NotImplemented("validate() is not implemented by this adapter (a runtime without a validator declares lacks['validate'])");
  }
  endCase() {}
}
const DEFAULTS = Runtime.prototype;

// ------------------------------------------------------------------------------------------
// stdin and stdout

function log(text) {
  try { fs.writeSync(2, `skillspec-kit: ${text}\n`); } catch { /* stderr is gone */ }
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));
function writeAll(fd, buf) {
  let off = 0;
  while (off < buf.length) {
    try {
      off += fs.writeSync(fd, buf, off, buf.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
      Atomics.wait(sleepCell, 0, 0, 1); // a non-blocking pipe is full: the runner reads soon
    }
  }
}

function isFifo(fd) {
  try { return fs.fstatSync(fd).isFIFO(); } catch { return false; }
}

let wire = null;

/** Takes stdin and stdout for the protocol; idempotent. */
function takeOverStdio() {
  if (wire) return wire;
  const O = fs.constants;
  let outFd = 1;
  let inFd = null;
  let level = 'javascript';
  // Descriptor level: Node has no dup(), but reopening /dev/fd/N gives a second descriptor on
  // the same pipe (close-on-exec, as libuv opens everything), and open() takes the lowest free
  // number, so closing 1 and reopening stderr puts stderr at 1. Only for pipes: a regular file
  // would be reopened at offset 0 and a socket cannot be reopened.
  if (isFifo(1)) {
    try {
      const stderrIsFile = fs.fstatSync(2).isFile();
      const errFlags = O.O_WRONLY | (stderrIsFile ? O.O_APPEND : 0);
      const proto = fs.openSync('/dev/fd/1', O.O_WRONLY | O.O_NONBLOCK);
      let errCopy;
      try {
        errCopy = fs.openSync('/dev/fd/2', errFlags | O.O_NONBLOCK);
      } catch (e) {
        fs.closeSync(proto);
        throw e;
      }
      fs.closeSync(1);
      const one = fs.openSync(`/dev/fd/${errCopy}`, errFlags);
      fs.closeSync(errCopy);
      if (one !== 1) log(`stdout could not be moved to stderr (got descriptor ${one}); only JavaScript writes are redirected`);
      outFd = proto;
      level = 'descriptor';
    } catch (e) {
      log(`stdout stays the protocol's at the descriptor level (${e.code || e.message}); only JavaScript writes are redirected`);
    }
  }
  if (isFifo(0)) {
    try {
      const proto = fs.openSync('/dev/fd/0', O.O_RDONLY | O.O_NONBLOCK);
      fs.closeSync(0);
      const zero = fs.openSync('/dev/null', O.O_RDONLY);
      if (zero !== 0) log(`stdin could not be moved to /dev/null (got descriptor ${zero})`);
      inFd = proto;
    } catch (e) {
      log(`stdin stays the protocol's (${e.code || e.message})`);
    }
  }
  // JavaScript level, always: process.stdout (and so console.log, and streams piped into it).
  const toStderr = (chunk, encoding, callback) => process.stderr.write(chunk, encoding, callback);
  process.stdout.write = toStderr;
  process.exit = (code) => {
    throw new Error(`process.exit(${code ?? ''}) was called; the adapter kit owns the process`);
  };
  process.on('uncaughtException', (e) => {
    log(`uncaught exception in the runtime (logged, the adapter goes on): ${e && e.stack ? e.stack : e}`);
  });
  process.on('unhandledRejection', (e) => {
    log(`unhandled rejection in the runtime (logged, the adapter goes on): ${e && e.stack ? e.stack : e}`);
  });
  wire = {
    level,
    outFd,
    input: () => (inFd === null ? process.stdin : new net.Socket({ fd: inFd, readable: true, writable: false })),
    write: (buf) => writeAll(outFd, buf),
  };
  return wire;
}

const realExit = process.exit.bind(process);

// ------------------------------------------------------------------------------------------
// The conversation

class Answer extends Error {}

/** `String(value)`, or a plain description when that throws (a 100,000-deep array overflows the stack). */
function safeString(value) {
  try {
    return String(value);
  } catch (e) {
    return Array.isArray(value) ? '(an array too deeply nested to show)' : `(a value that cannot be shown: ${e && e.name})`;
  }
}

function clean(text, limit = 4000) {
  const s = safeString(text).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  return s.length <= limit ? s : `${s.slice(0, limit)}... (${s.length} characters in all)`;
}

function describe(value) {
  let s;
  try { s = JSON.stringify(value); } catch { s = undefined; }
  return clean(s === undefined ? safeString(value) : s, 200);
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Where in `value` something JSON.stringify would drop, change or refuse is, or null. */
function findNonJson(value, path) {
  const queue = [[value, path]];
  const seen = new Set();
  for (let next = 0; next < queue.length; next++) {
    const [v, p] = queue[next];
    if (typeof v === 'string') {
      if (LONE_SURROGATE.test(v)) return `${p} (${describe(v)}) holds a lone surrogate, which is not valid Unicode`;
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v)) return `${p} is ${v}, which JSON cannot hold`;
    } else if (typeof v === 'bigint' || typeof v === 'function' || typeof v === 'symbol') {
      return `${p} is a ${typeof v}, which JSON cannot hold`;
    } else if (v !== null && typeof v === 'object') {
      if (seen.has(v)) return `${p} refers back to itself (a cycle)`;
      seen.add(v);
      if (Array.isArray(v)) {
        v.forEach((item, i) => queue.push([item, `${p}[${i}]`]));
      } else if (v instanceof Map || v instanceof Set || ArrayBuffer.isView(v) || v instanceof ArrayBuffer) {
        return `${p} is a ${v.constructor.name}, which JSON would not keep`;
      } else if (typeof v.toJSON !== 'function') {
        for (const [k, item] of Object.entries(v)) {
          const key = /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${describe(k)}]`;
          queue.push([k, `the key ${p}${key}`]);
          if (item !== undefined) queue.push([item, p + key]);
        }
      }
    }
  }
  return null;
}

const isStrList = (v) => Array.isArray(v) && v.every((x) => typeof x === 'string');
const isSeq = (v) => Number.isSafeInteger(v) && v >= 0;
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
/** A reason of `lacks`: text that says something, within what the runner keeps. */
const isReason = (v) => typeof v === 'string' && v.trim() !== '' && !LONE_SURROGATE.test(v) && Buffer.byteLength(v, 'utf8') <= MAX_REASON;
/** A `name` or `version` of a dialect claim: 1 to MAX_CLAIM bytes of UTF-8. */
const isClaimText = (v) => typeof v === 'string' && v !== '' && !LONE_SURROGATE.test(v) && Buffer.byteLength(v, 'utf8') <= MAX_CLAIM;

/** What is wrong with the adapter's `dialects` (not null), as the runner would refuse it
 * (PROTOCOL.md, "Dialects"); [] when nothing is. */
function dialectsProblems(dialects) {
  const shape = '{"name": string, "version": string, "mode"?: string}';
  if (!Array.isArray(dialects) || !dialects.length) {
    return [`\`dialects\` must be a non-empty array of ${shape} (or null: portable-skills, not sent), got ${describe(dialects)}`];
  }
  const problems = [];
  const names = [];
  dialects.forEach((claim, i) => {
    if (!(isPlainObject(claim)
      && Object.keys(claim).every((k) => ['name', 'version', 'mode'].includes(k))
      && isClaimText(claim.name) && isClaimText(claim.version)
      && (!('mode' in claim) || typeof claim.mode === 'string'))) {
      problems.push(`\`dialects[${i}]\` must be ${shape} with no other key, name and version of 1 to ${MAX_CLAIM} bytes, got ${describe(claim)}`);
      return;
    }
    const { name, mode } = claim;
    if (names.includes(name)) problems.push(`\`dialects\` claims ${describe(name)} twice`);
    names.push(name);
    if (!Object.prototype.hasOwnProperty.call(DIALECTS, name)) return; // unknown to the runner: kept and shown, no case runs for it
    const modes = DIALECTS[name];
    if (modes.length && mode === undefined) {
      problems.push(`\`dialects[${i}]\`: dialect ${describe(name)} needs a \`mode\`, one of ${modes.join(', ')}`);
    } else if (modes.length && !modes.includes(mode)) {
      problems.push(`\`dialects[${i}]\`: dialect ${describe(name)} has no mode ${describe(mode)} (its modes: ${modes.join(', ')})`);
    } else if (!modes.length && mode !== undefined) {
      problems.push(`\`dialects[${i}]\`: dialect ${describe(name)} has no modes, got the mode ${describe(mode)}`);
    }
  });
  return problems;
}

// The types of `case_start.config` (PROTOCOL.md, `case_start` and "Profiles"): a field maps to
// [what is expected, its test], or to the fields of an object. Only types are checked: what a
// value means (a malformed allowlist, `timeout_ms` "abc", another `session` text) is the
// runtime's to judge, and cases send such values on purpose. An absent field stays absent; a
// field the table does not know passes through.
const STRING = ['a string', (v) => typeof v === 'string'];
const STRING_OR_NULL = ['a string or null', (v) => v === null || typeof v === 'string'];
const BOOLEAN = ['a boolean', (v) => typeof v === 'boolean'];
const STRINGS = ['a list of strings', isStrList];
const STRINGS_OR_NULL = ['a list of strings or null', (v) => v === null || isStrList(v)];
const COUNT_OR_NULL = ['a non-negative integer or null', (v) => v === null || (Number.isSafeInteger(v) && v >= 0)];
const CONFIG_TYPES = {
  skills_root: STRING_OR_NULL,
  script_allowlist: STRING_OR_NULL,
  tool_allowlist: STRINGS_OR_NULL,
  allow_trading: BOOLEAN,
  replay: STRING_OR_NULL,
  timeout_ms: STRING_OR_NULL,
  python: STRING,
  env: ['an object of strings', (v) => isPlainObject(v) && Object.values(v).every((x) => typeof x === 'string')],
  platform: STRING_OR_NULL,
  skill_dirs: { user: STRING_OR_NULL, workspace: STRING_OR_NULL, installed: STRING_OR_NULL },
  registry: STRING,
  selection: { max_active: COUNT_OR_NULL, max_context_tokens: COUNT_OR_NULL },
  hitl: { enabled: BOOLEAN, script_tool_allowed: BOOLEAN, session: STRING, answers: STRINGS, timeout_ms: STRING_OR_NULL },
  dialect: STRING,
  user_skills_root: STRING,
};

/** What is wrong with the types of `value` (`case_start.config`), each naming the field and
 * what it must be; [] when nothing is. */
function configProblems(value, types = CONFIG_TYPES, where = 'config') {
  if (!isPlainObject(value)) return [`\`${where}\` must be an object, got ${describe(value)}`];
  const problems = [];
  for (const [key, expected] of Object.entries(types)) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (!Array.isArray(expected)) problems.push(...configProblems(value[key], expected, `${where}.${key}`));
    else if (!expected[1](value[key])) problems.push(`\`${where}.${key}\` must be ${expected[0]}, got ${describe(value[key])}`);
  }
  return problems;
}

function err(seq, message) {
  return { type: 'error', seq: isSeq(seq) ? seq : null, message: clean(message) };
}

class Session {
  constructor(runtime, w) {
    this.runtime = runtime;
    this.wire = w;
    this.openSeq = null;
    this.refusedStart = null; // the runtime's message when it refused to start for the open case
  }

  async invoke(method, ...args) {
    const own = this.runtime[method];
    const fn = typeof own === 'function' ? own : DEFAULTS[method];
    try {
      return await fn.apply(this.runtime, args);
    } catch (e) {
      if (e instanceof Refused) throw e;
      if (e instanceof AdapterError || e instanceof NotImplemented) throw new Answer(e.message);
      if (e instanceof Unmapped) throw new Answer(`the runtime's error is not in the adapter's mapping table (ErrorMap): ${e.text}`);
      log(`${method}() threw; answering error. Stack:\n${e && e.stack ? e.stack : String(e)}`);
      const what = e instanceof Error ? `${e.name}: ${e.message}` : describe(e);
      throw new Answer(`${method}() threw ${what} (stack on the adapter's stderr)`);
    }
  }

  async cleanup() {
    if (this.openSeq === null) return;
    this.openSeq = null;
    this.refusedStart = null;
    try {
      await this.invoke('endCase');
    } catch (e) {
      log(`endCase() on shutdown: ${e.message}`);
    }
  }

  /** Answers one request; null for `stop`. */
  async handle(msg) {
    if (!isPlainObject(msg)) return err(null, `a request must be a JSON object, got ${describe(msg)}`);
    const kind = msg.type;
    const seq = isSeq(msg.seq) ? msg.seq : null;
    try {
      if (kind === 'start') return this.start(msg);
      if (kind === 'stop') return null;
      if (seq === null) throw new Answer(`\`${clean(kind, 80)}\` request without a valid \`seq\``);
      if (kind === 'case_start') return await this.caseStart(seq, msg);
      if (kind === 'step') return await this.step(seq, msg);
      if (kind === 'case_end') return await this.caseEnd(seq);
      throw new Answer(`unknown request type ${describe(kind)} (this adapter speaks protocol version ${PROTOCOL_VERSION})`);
    } catch (e) {
      if (e instanceof Answer) return err(seq, e.message);
      throw e;
    }
  }

  start(msg) {
    if (msg.protocol_version !== PROTOCOL_VERSION) {
      return err(null, `protocol version ${describe(msg.protocol_version)} is not supported (this adapter speaks ${PROTOCOL_VERSION})`);
    }
    const rt = this.runtime;
    const features = rt.features ?? [];
    const language = rt.language === undefined ? 'javascript' : rt.language;
    const problems = [];
    if (typeof rt.name !== 'string' || !rt.name) problems.push('`name` must be a non-empty string');
    if (typeof rt.version !== 'string') problems.push('`version` must be a string');
    if (!isStrList(features)) problems.push('`features` must be an array of strings');
    if (language !== null && typeof language !== 'string') problems.push('`language` must be a string or null');
    const toolNames = rt.toolNames ?? {};
    const nameOk = (v) => typeof v === 'string' && v.length > 0 && !/[\s\u0000-\u001f\u007f-\u009f]/.test(v);
    if (!isPlainObject(toolNames) || !Object.entries(toolNames).every(([k, v]) => SPEC_TOOLS.includes(k) && nameOk(v))) {
      problems.push(`\`toolNames\` must map tools of the specification (${SPEC_TOOLS.join(', ')}) to the runtime's own names (non-empty, no spaces)`);
    }
    const readScope = rt.readScope ?? null;
    if (readScope !== null && !READ_SCOPES.includes(readScope)) {
      problems.push(`\`readScope\` must be one of ${READ_SCOPES.join(', ')} (or null: skill), got ${describe(readScope)}`);
    }
    const formats = rt.formats ?? null;
    if (formats !== null && !(isStrList(formats) && formats.length && formats.every((f) => SKILL_FORMATS.includes(f)) && new Set(formats).size === formats.length)) {
      problems.push(`\`formats\` must be a non-empty array of ${SKILL_FORMATS.join(', ')}, each once (or null: both), got ${describe(formats)}`);
    }
    const lacks = rt.lacks ?? {};
    if (!isPlainObject(lacks)) {
      problems.push(`\`lacks\` must map mechanisms (${MECHANISMS.join(', ')}) to reasons, got ${describe(lacks)}`);
    } else {
      for (const [mechanism, reason] of Object.entries(lacks)) {
        if (!MECHANISMS.includes(mechanism)) {
          problems.push(`\`lacks\` names ${describe(mechanism)}, not a mechanism of ${MECHANISMS.join(', ')}`);
        } else if (!isReason(reason)) {
          problems.push(`\`lacks[${describe(mechanism)}]\` must be a reason, a non-empty string of at most ${MAX_REASON} bytes of UTF-8 saying what the runtime's docs or code show, got ${describe(reason)}`);
        }
      }
    }
    const dialects = rt.dialects ?? null;
    if (dialects !== null) problems.push(...dialectsProblems(dialects));
    if (problems.length) return err(null, `the adapter's runtime is misdeclared: ${problems.join('; ')}`);
    return {
      type: 'started',
      protocol_version: PROTOCOL_VERSION,
      implementation: {
        name: rt.name, version: rt.version, language, features: [...features], process_per_case: Boolean(rt.processPerCase),
        ...(rt.sideBySide === undefined || rt.sideBySide ? {} : { side_by_side: false }),
        ...(Object.keys(toolNames).length ? { tool_names: { ...toolNames } } : {}),
        ...(readScope !== null ? { read_scope: readScope } : {}),
        ...(formats !== null ? { formats: [...formats] } : {}),
        ...(Object.keys(lacks).length ? { lacks: { ...lacks } } : {}),
        ...(dialects !== null ? { dialects: dialects.map((d) => ({ ...d })) } : {}),
      },
    };
  }

  async caseStart(seq, msg) {
    if (this.openSeq !== null) throw new Answer(`case ${this.openSeq} is still open: \`case_end\` it before starting case ${seq}`);
    // One bad request never ends the session (PROTOCOL.md, "Errors"): a field of the wrong type
    // is answered here, naming it, before the runtime sees anything, and the case is not opened,
    // so the next `case_start` starts afresh.
    const problems = typeof msg.root === 'string' ? [] : [`\`root\` must be a string, got ${describe(msg.root)}`];
    problems.push(...configProblems(msg.config));
    if (problems.length) throw new Answer(`\`case_start\` has fields of the wrong type: ${problems.join('; ')}`);
    this.openSeq = seq;
    this.refusedStart = null;
    try {
      await this.invoke('startCase', Object.freeze({ ...msg.config }), msg.root);
    } catch (e) {
      if (e instanceof Refused) {
        // The runtime would not start: the case stays open (case_end follows) and every step of
        // it is refused with the runtime's message.
        this.refusedStart = e.message;
        return { type: 'case_started', seq, refused: { message: clean(e.message) } };
      }
      // No case_end follows a refused case_start: release what was half built now.
      this.openSeq = null;
      try {
        await this.invoke('endCase');
      } catch (e2) {
        log(`endCase() after a failed startCase(): ${e2.message}`);
      }
      throw e;
    }
    return { type: 'case_started', seq };
  }

  async caseEnd(seq) {
    if (this.openSeq !== seq) throw new Answer(`\`case_end\` for case ${seq}, which is not open`);
    this.openSeq = null;
    this.refusedStart = null;
    await this.invoke('endCase');
    return { type: 'case_ended', seq };
  }

  async step(seq, msg) {
    const { index, step } = msg;
    if (this.openSeq !== seq) throw new Answer(`step for case ${seq}, which is not open`);
    if (!isSeq(index)) throw new Answer('`step` request without a valid `index`');
    if (!isPlainObject(step)) throw new Answer('`step` request without a `step` object');
    if (this.refusedStart !== null) return { type: 'step_result', seq, index, refused: { message: clean(this.refusedStart) } };
    try {
      return { type: 'step_result', seq, index, result: await this.operation(step) };
    } catch (e) {
      if (e instanceof Refused) return { type: 'step_result', seq, index, refused: { message: clean(e.message) } };
      throw e;
    }
  }

  /** The result of one step operation (a {@link Refused} passes through). */
  async operation(step) {
    let result;
    switch (step.op) {
      case 'discover':
        result = await this.discover();
        break;
      case 'tools': {
        const offered = await this.invoke('tools');
        if (!isStrList(offered)) throw new Answer(`adapter bug: tools() must return an array of tool names, got ${describe(offered)}`);
        result = { offered };
        break;
      }
      case 'prompt': {
        const p = await this.invoke('prompt');
        if (!isPlainObject(p) || typeof p.text !== 'string' || typeof p.baseline !== 'string') {
          throw new Answer(`adapter bug: prompt() must return {text, baseline}, two strings; got ${describe(p)}`);
        }
        result = { text: p.text, baseline: p.baseline };
        break;
      }
      case 'call': {
        if (typeof step.tool !== 'string' || !('args' in step)) throw new Answer('`call` step without a string `tool` and `args`');
        const r = await this.invoke('call', step.tool, step.args);
        // Profile `hitl` (PROTOCOL.md): a result may carry `asked`, the questions the runtime
        // asked the human during the call, a list of objects.
        const asked = isPlainObject(r) && 'asked' in r;
        if (asked && !(Array.isArray(r.asked) && r.asked.every(isPlainObject))) {
          throw new Answer(`adapter bug: \`asked\` must be a list of question objects, got ${describe(r.asked)}`);
        }
        const okShape = isPlainObject(r) && Object.keys(r).length === (asked ? 3 : 2) && (
          (r.ok === true && isPlainObject(r.value))
          || (r.ok === false && isPlainObject(r.error) && typeof r.error.code === 'string'));
        if (!okShape) throw new Answer(`adapter bug: call() must return ok({...}) or error(code, {...}), got ${describe(r)}`);
        result = r;
        break;
      }
      case 'new_turn':
        await this.invoke('newTurn');
        result = {};
        break;
      case 'validate': {
        if (typeof step.path !== 'string') throw new Answer('`validate` step without a string `path`');
        const v = await this.invoke('validate', step.path);
        const okShape = isPlainObject(v)
          && Object.keys(v).every((k) => ['valid', 'problems', 'properties'].includes(k))
          && typeof v.valid === 'boolean' && isStrList(v.problems)
          && (!('properties' in v) || isPlainObject(v.properties));
        if (!okShape) {
          throw new Answer('adapter bug: validate() must return validation(...), {"valid": boolean, "problems": [string], '
            + `"properties"?: {...}} with no other key (properties left out when the validator read none); got ${describe(v)}`);
        }
        result = { valid: v.valid, problems: [...v.problems], ...('properties' in v ? { properties: v.properties } : {}) };
        break;
      }
      default:
        throw new Answer(`unknown op ${describe(step.op)} (this adapter speaks protocol version ${PROTOCOL_VERSION})`);
    }
    return result;
  }

  async discover() {
    let entries = await this.invoke('discover');
    if (entries !== null && typeof entries === 'object' && typeof entries[Symbol.iterator] === 'function') entries = [...entries];
    if (!Array.isArray(entries)) throw new Answer(`adapter bug: discover() must return an array of loaded(...) / skipped(...) entries, got ${describe(entries)}`);
    const found = [];
    const skips = [];
    entries.forEach((e, i) => {
      if (isPlainObject(e) && 'reason' in e && !('id' in e)) {
        if (typeof e.path !== 'string' || !SKIP_REASONS.includes(e.reason)) {
          throw new Answer(`adapter bug: discover() entry ${i} is a skipped entry with a bad path or a reason not in ${SKIP_REASONS.join('/')}: ${describe(e)}`);
        }
        skips.push(e);
      } else if (isPlainObject(e) && typeof e.id === 'string') {
        const bad = ['name', 'description', 'body', 'location'].filter((k) => k in e && typeof e[k] !== 'string');
        if (bad.length || ('format' in e && !FORMATS.includes(e.format))) {
          throw new Answer(`adapter bug: discover() entry ${i} (${describe(e.id)}) needs string name/description/body/location `
            + 'and a format of portable or legacy');
        }
        found.push(e);
      } else {
        throw new Answer(`adapter bug: discover() entry ${i} is neither loaded(...) nor skipped(...): ${describe(e)}`);
      }
    });
    const result = { loaded: found };
    if ((this.runtime.features ?? []).includes('skip-report')) result.skipped = skips;
    return result;
  }

  encode(response) {
    const where = findNonJson(response.result, 'result');
    if (where) return Buffer.from(JSON.stringify(err(response.seq, `the adapter's answer cannot be sent as UTF-8 JSON: ${where}`)));
    let text;
    try {
      text = JSON.stringify(response);
    } catch (e) {
      return Buffer.from(JSON.stringify(err(response.seq, `the adapter's answer cannot be sent as JSON: ${e.message}`)));
    }
    const data = Buffer.from(text, 'utf8');
    if (data.length > MAX_LINE) {
      return Buffer.from(JSON.stringify(err(response.seq, `the adapter's answer is ${data.length} bytes, above the protocol's line limit of ${MAX_LINE} bytes`)));
    }
    return data;
  }

  /** Answers a line that was over MAX_REQUEST bytes (discarded unread); false when the runner is gone. */
  async tooLong(size) {
    return this.send(err(null, `request line of ${size} bytes is over the adapter kit's limit of ${MAX_REQUEST} bytes and was discarded unread (the runner's own lines are at most ${MAX_LINE} bytes)`));
  }

  /** Answers one line; false after `stop`. */
  async line(raw) {
    if (raw.every((b) => b === 0x20 || b === 0x09 || b === 0x0d)) return true; // a blank line
    let msg;
    let response;
    try {
      msg = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(raw));
    } catch (e) {
      response = err(null, e instanceof TypeError ? 'request is not valid UTF-8' : `request is not JSON: ${e.message}`);
    }
    if (!response) {
      // A request the kit cannot take is answered with an error and the next line is served
      // (PROTOCOL.md, "Errors"): whatever it holds, it never ends the session.
      try {
        response = await this.handle(msg);
      } catch (e) {
        log(`a request could not be handled; answering error. Stack:\n${e && e.stack ? e.stack : safeString(e)}`);
        const what = e instanceof Error ? `${e.name}: ${e.message}` : describe(e);
        response = err(null, `the request could not be handled: ${what}`);
      }
      if (response === null) return false;
    }
    return this.send(response);
  }

  /** Writes one response line; false when the runner is gone. */
  send(response) {
    try {
      this.wire.write(Buffer.concat([this.encode(response), Buffer.from('\n')]));
    } catch (e) {
      if (e.code === 'EPIPE') return false; // the runner is gone
      throw e;
    }
    return true;
  }
}

/**
 * Answers the runner's requests with `runtime` until `stop` or the end of stdin, ends the open
 * case (if any), then exits the process (`{exit: false}`: resolve instead, leaving the exit to
 * the caller; handles the runtime left open then keep the process alive until the runner's
 * SIGTERM). Call it once, at the end of the adapter.
 * @param {RuntimeAdapter} runtime @param {{exit?: boolean}} [options] @returns {Promise<void>}
 */
export async function serve(runtime, options = {}) {
  if (!runtime || typeof runtime !== 'object') throw new TypeError('serve() takes the adapter object');
  const w = takeOverStdio();
  const session = new Session(runtime, w);
  const input = w.input();
  // The pieces of the line being read, kept only while the line stays within MAX_REQUEST bytes:
  // past that they are dropped and the rest of the line is thrown away up to its newline, so
  // that no line, however long, holds more than MAX_REQUEST bytes (chunks arrive 64 KiB at a time).
  let pending = [];
  let size = 0;
  let going = true;
  const finish = () => {
    const line = size > MAX_REQUEST ? null : pending.length === 1 ? pending[0] : Buffer.concat(pending, size);
    const length = size;
    pending = [];
    size = 0;
    return line === null ? session.tooLong(length) : session.line(line);
  };
  try {
    for await (const chunk of input) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        const end = nl < 0 ? chunk.length : nl;
        size += end - start;
        if (size <= MAX_REQUEST) {
          if (end > start) pending.push(chunk.subarray(start, end));
        } else if (pending.length) {
          pending = []; // over the limit: let go of it now, not at the newline
        }
        if (nl < 0) break;
        start = nl + 1;
        going = await finish();
        if (!going) break;
      }
      if (!going) break;
    }
    if (going && size) await finish();
  } finally {
    await session.cleanup();
    input.destroy();
  }
  if (options.exit !== false) realExit(0);
}

// Evaluating the kit protects the protocol from the runtime's output at once (see the module
// documentation); SKILLSPEC_KIT_NO_TAKEOVER=1 imports it without (for tests of the helpers).
if (process.env.SKILLSPEC_KIT_NO_TAKEOVER !== '1') takeOverStdio();
