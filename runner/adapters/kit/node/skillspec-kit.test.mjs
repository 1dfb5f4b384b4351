// Tests of the Node adapter kit: adapters built on it run as child processes and are spoken to
// line by line exactly as the runner does, so the tests see the bytes the runner would see.
// No dependencies; run with `node --test runner/adapters/kit/node/`.
//
// Two ways of starting an adapter: `pipes` gives it real pipes on stdin, stdout and stderr, as
// the runner does (through sh and cat, since Node's own child_process uses socket pairs), where
// the kit protects stdout at the descriptor level; `sockets` is Node's socket pairs, where only
// JavaScript writes can be redirected.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const KIT = path.join(HERE, 'skillspec-kit.mjs');
const TIMEOUT = 20000;
process.env.SKILLSPEC_KIT_NO_TAKEOVER = '1'; // this process keeps its own stdout
const kit = await import(KIT);
delete process.env.SKILLSPEC_KIT_NO_TAKEOVER;

const CONFIG = {
  skills_root: null, script_allowlist: null, tool_allowlist: null, allow_trading: false,
  replay: null, timeout_ms: null, python: 'python3', env: { LANG: 'C.UTF-8' },
};

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'skillspec-kit-node-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
let counter = 0;
const running = new Set();
// Whatever a failed test left running: each adapter is its own process group (`detached`).
after(() => {
  for (const child of running) {
    try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
});

/** Writes an adapter module importing the kit; returns its path. */
function adapterFile(body, prelude = '') {
  const file = path.join(tmp, `adapter-${counter++}.mjs`);
  fs.writeFileSync(file, `${prelude}import * as kit from ${JSON.stringify(KIT)};\n${body}\n`);
  return file;
}

class Proc {
  constructor(file, mode = 'pipes', env = {}) {
    this.statusFile = path.join(tmp, `status-${counter++}`);
    const [cmd, args] = mode === 'pipes'
      ? ['sh', ['-c', '{ cat | { "$0" "$1" 2>&1 1>&3 3>&-; echo $? > "$2"; } | cat >&2; } 3>&1 | cat', process.execPath, file, this.statusFile]]
      : [process.execPath, [file]];
    this.child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true, env: { ...process.env, ...env } });
    running.add(this.child);
    this.mode = mode;
    this.lines = [];
    this.waiting = null;
    this.closed = false;
    this.stderr = '';
    let buf = Buffer.alloc(0);
    this.child.stdout.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (let nl; (nl = buf.indexOf(10)) >= 0;) {
        this.lines.push(buf.subarray(0, nl + 1));
        buf = buf.subarray(nl + 1);
      }
      this.wake();
    });
    this.child.stdout.on('end', () => {
      if (buf.length) this.lines.push(buf);
      this.closed = true;
      this.wake();
    });
    this.child.stderr.on('data', (chunk) => { this.stderr += chunk.toString(); });
    this.exited = new Promise((resolve) => this.child.on('close', (code) => {
      running.delete(this.child);
      resolve(code);
    }));
  }

  wake() {
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      w();
    }
  }

  async nextLine() {
    const deadline = Date.now() + TIMEOUT;
    while (!this.lines.length && !this.closed) {
      await new Promise((resolve, reject) => {
        this.waiting = resolve;
        setTimeout(() => reject(new Error(`no answer within ${TIMEOUT} ms; stderr: ${this.stderr}`)), Math.max(0, deadline - Date.now())).unref();
      });
    }
    return this.lines.shift() ?? null;
  }

  send(message) {
    this.child.stdin.write(Buffer.isBuffer(message) ? message : `${JSON.stringify(message)}\n`);
  }

  /** A line of `size` bytes of `x` and then `tail`, written a chunk at a time as the pipe drains
   * (one chunk in memory). */
  async sendStreaming(size, { chunk = 1 << 20, tail = '\n' } = {}) {
    const block = Buffer.alloc(chunk, 'x');
    for (let left = size; left > 0; left -= chunk) {
      if (!this.child.stdin.write(left >= chunk ? block : block.subarray(0, left))) {
        await new Promise((resolve) => this.child.stdin.once('drain', resolve));
      }
    }
    this.send(Buffer.from(tail));
  }

  async recv() {
    const line = await this.nextLine();
    assert.ok(line, `the adapter closed stdout; stderr: ${this.stderr}`);
    assert.equal(line.at(-1), 10, 'a response ends with a newline');
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(line));
  }

  async ask(message) {
    this.send(message);
    return this.recv();
  }

  /** Stops the adapter; returns {code, extra} (its exit status, lines after its last answer). */
  async finish(stop = true) {
    if (stop) this.send({ type: 'stop' });
    this.child.stdin.end();
    const outer = await this.exited;
    const extra = [];
    for (let line; (line = await this.nextLine()) !== null;) extra.push(line.toString());
    const code = this.mode === 'pipes' ? Number(fs.readFileSync(this.statusFile, 'utf8')) : outer;
    return { code, extra };
  }
}

function start(body, { mode = 'pipes', prelude = '', env = {} } = {}) {
  return new Proc(adapterFile(body, prelude), mode, env);
}

async function started(p) {
  const r = await p.ask({ type: 'start', protocol_version: 2 });
  assert.equal(r.type, 'started', JSON.stringify(r));
  return r;
}

async function openCase(p, seq = 1, root = tmp, config = CONFIG) {
  assert.deepEqual(await p.ask({ type: 'case_start', seq, case: 'x.y', root, config }), { type: 'case_started', seq });
}

const step = (p, op, { seq = 1, index = 0, ...fields } = {}) => p.ask({ type: 'step', seq, index, step: { op, ...fields } });

async function cleanExit(p, stop = true) {
  const { code, extra } = await p.finish(stop);
  assert.deepEqual(extra, [], 'lines after the last answer');
  assert.equal(code, 0, p.stderr);
}

const MINIMAL = `
await kit.serve({
  name: 'minimal', version: '1.2', features: ['skip-report'],
  discover() { return [kit.loaded('b', 'B', 'd', 'body'), kit.skipped('c', 'symlink'), kit.loaded('a', 'A', '', '', 'legacy')]; },
  tools() { return ['skill_read_reference']; },
  prompt() { return { text: 'text', baseline: 'base' }; },
  async call(tool, args) { return kit.ok({ tool, args }); },
  newTurn() {},
});`;

describe('handshake', () => {
  for (const mode of ['pipes', 'sockets']) {
    test(`started declares the runtime (${mode})`, async () => {
      const p = start(MINIMAL.replace("['skip-report']", "['skip-report', 'tool-allowlist']"), { mode });
      const r = await started(p);
      assert.equal(r.protocol_version, 2);
      assert.deepEqual(r.implementation, {
        name: 'minimal', version: '1.2', language: 'javascript', features: ['skip-report', 'tool-allowlist'], process_per_case: false,
      });
      await cleanExit(p);
    });
  }

  test('processPerCase and a class instance', async () => {
    const p = start("class A extends kit.Runtime { constructor() { super(); this.name = 'p'; this.version = '1'; this.processPerCase = true; this.language = 'typescript'; } }\nawait kit.serve(new A());");
    const r = await started(p);
    assert.equal(r.implementation.process_per_case, true);
    assert.equal(r.implementation.language, 'typescript');
    await cleanExit(p);
  });

  test('sideBySide is sent only when false', async () => {
    // The default (true) is not on the wire: an adapter that says nothing sends what it did.
    let p = start("class A extends kit.Runtime { constructor() { super(); this.name = 'p'; this.version = '1'; this.sideBySide = true; } }\nawait kit.serve(new A());");
    assert.equal('side_by_side' in (await started(p)).implementation, false);
    await cleanExit(p);
    p = start("class A extends kit.Runtime { constructor() { super(); this.name = 'p'; this.version = '1'; this.sideBySide = false; } }\nawait kit.serve(new A());");
    assert.equal((await started(p)).implementation.side_by_side, false);
    await cleanExit(p);
    p = start("await kit.serve({ name: 'p', version: '1', sideBySide: false });");
    assert.equal((await started(p)).implementation.side_by_side, false);
    await cleanExit(p);
  });

  test('another version is refused and the adapter stays usable', async () => {
    const p = start(MINIMAL);
    for (const version of [1, 3, '2', null]) {
      const r = await p.ask({ type: 'start', protocol_version: version });
      assert.equal(r.type, 'error');
      assert.equal(r.seq, null);
      assert.match(r.message, /version/);
    }
    await started(p);
    await cleanExit(p);
  });

  // One process for many declarations: each case sets the runtime's readScope, formats and lacks
  // from the JavaScript object in env DECL (dropping the earlier ones), and the next `start`
  // declares them.
  const DECLARING = `
await kit.serve({
  name: 'd', version: '1',
  startCase(config) {
    for (const key of ['readScope', 'formats', 'lacks', 'dialects']) delete this[key];
    Object.assign(this, (0, eval)(\`(\${config.env.DECL})\`));
  },
});`;
  const declare = async (p, seq, decl) => {
    await openCase(p, seq, tmp, { ...CONFIG, env: { DECL: decl } });
    assert.equal((await p.ask({ type: 'case_end', seq })).type, 'case_ended');
    return p.ask({ type: 'start', protocol_version: 2 });
  };

  test('readScope, formats and lacks are sent only when set', async () => {
    const p = start(DECLARING);
    let { implementation } = await started(p);
    for (const key of ['read_scope', 'formats', 'lacks']) assert.equal(key in implementation, false, key);
    const reason = 'hermes-agent 0.19.0 has no script tool: tools/skills_tool.py registers skills_list and skill_view only';
    ({ implementation } = await declare(p, 1, `{ readScope: 'skills-root', formats: ['skill-md'],
      lacks: { skill_run_script: ${JSON.stringify(reason)}, 'nested-scan': "scans the root's children only", 'argument-keys': 'é'.repeat(2048) } }`));
    assert.equal(implementation.read_scope, 'skills-root');
    assert.deepEqual(implementation.formats, ['skill-md']);
    assert.deepEqual(implementation.lacks, { skill_run_script: reason, 'nested-scan': "scans the root's children only", 'argument-keys': 'é'.repeat(2048) });
    ({ implementation } = await declare(p, 2, "{ readScope: 'case-root', formats: ['skill-yml', 'skill-md'], lacks: {} }"));
    assert.deepEqual([implementation.read_scope, implementation.formats], ['case-root', ['skill-yml', 'skill-md']]);
    assert.equal('lacks' in implementation, false);
    ({ implementation } = await declare(p, 3, "{ readScope: 'skill', formats: null, lacks: null }"));
    assert.equal(implementation.read_scope, 'skill');
    assert.equal('formats' in implementation || 'lacks' in implementation, false);
    await cleanExit(p);
    // The class's defaults send nothing either.
    const q = start("class A extends kit.Runtime { constructor() { super(); this.name = 'p'; this.version = '1'; } }\nawait kit.serve(new A());");
    ({ implementation } = await started(q));
    for (const key of ['read_scope', 'formats', 'lacks']) assert.equal(key in implementation, false, key);
    await cleanExit(q);
  });

  test('a misdeclared readScope, formats or lacks refuses the handshake', async () => {
    const p = start(DECLARING);
    await started(p);
    let seq = 0;
    for (const [decl, words] of [
      ["{ readScope: 'workspace' }", '`readScope` must be one of skill, skills-root, case-root'],
      ['{ readScope: 5 }', '`readScope`'],
      ["{ readScope: ['skill'] }", '`readScope`'],
      ['{ formats: [] }', '`formats` must be a non-empty array of skill-md, skill-yml, each once'],
      ["{ formats: ['skill-md', 'skill-md'] }", '`formats`'],
      ["{ formats: ['SKILL.md'] }", '`formats`'],
      ["{ formats: 'skill-md' }", '`formats`'],
      ["{ formats: ['skill-md', 5] }", '`formats`'],
      ["{ lacks: { depth: 'x' } }", '`lacks` names "depth", not a mechanism'],
      ["{ lacks: { 'nested-scan': ' ' } }", '`lacks["nested-scan"]` must be a reason'],
      ["{ lacks: { 'nested-scan': '' } }", '`lacks["nested-scan"]`'],
      ["{ lacks: { 'nested-scan': 'x'.repeat(4097) } }", 'at most 4096 bytes'],
      ["{ lacks: { 'nested-scan': 'é'.repeat(2049) } }", 'at most 4096 bytes'],
      ["{ lacks: { 'nested-scan': '\\uD800 lone' } }", '`lacks["nested-scan"]`'],
      ['{ lacks: { skill_run_script: 5 } }', '`lacks["skill_run_script"]`'],
      ["{ lacks: ['nested-scan'] }", '`lacks` must map mechanisms'],
      ["{ lacks: 'nested-scan' }", '`lacks` must map mechanisms'],
    ]) {
      const r = await declare(p, ++seq, decl);
      assert.deepEqual([r.type, r.seq], ['error', null], decl);
      assert.ok(r.message.includes('misdeclared') && r.message.includes(words), `${decl}: ${r.message}`);
    }
    assert.equal('read_scope' in (await declare(p, 99, '{ readScope: null }')).implementation, false);
    await cleanExit(p);
  });

  test('dialects are checked and sent only when set', async () => {
    const p = start(DECLARING);
    let { implementation } = await started(p);
    assert.equal('dialects' in implementation, false);
    // A validator of dialect agentskills: what skills-ref declares, with the lacks only dialects have.
    ({ implementation } = await declare(p, 1, `{ dialects: [{ name: 'agentskills', version: '2026-08', mode: 'strict' }],
      lacks: { scan: 'no directory scan', activate_skill: 'no activation', validate: 'x' } }`));
    assert.deepEqual(implementation.dialects, [{ name: 'agentskills', version: '2026-08', mode: 'strict' }]);
    assert.deepEqual(Object.keys(implementation.lacks).sort(), ['activate_skill', 'scan', 'validate']);
    // Several; a dialect the runner does not know is sent as it is.
    ({ implementation } = await declare(p, 2, `{ dialects: [{ name: 'portable-skills', version: '1' },
      { name: 'agentskills', version: '2026-08', mode: 'lenient' }, { name: 'future-skills', version: '9', mode: 'whatever' }] }`));
    assert.deepEqual(implementation.dialects, [
      { name: 'portable-skills', version: '1' },
      { name: 'agentskills', version: '2026-08', mode: 'lenient' },
      { name: 'future-skills', version: '9', mode: 'whatever' },
    ]);
    ({ implementation } = await declare(p, 3, "{ dialects: [{ name: 'x'.repeat(64), version: 'é'.repeat(32) }] }"));
    assert.deepEqual(implementation.dialects, [{ name: 'x'.repeat(64), version: 'é'.repeat(32) }]);
    assert.equal('dialects' in (await declare(p, 4, '{ dialects: null }')).implementation, false);
    await cleanExit(p);
    // The class's default sends nothing either.
    const q = start("class A extends kit.Runtime { constructor() { super(); this.name = 'p'; this.version = '1'; } }\nawait kit.serve(new A());");
    assert.equal('dialects' in (await started(q)).implementation, false);
    await cleanExit(q);
  });

  test('a misdeclared dialects refuses the handshake', async () => {
    const p = start(DECLARING);
    await started(p);
    const agentskills = "{ name: 'agentskills', version: '2026-08', mode: 'strict' }";
    let seq = 0;
    for (const [decl, words] of [
      ['{ dialects: [] }', '`dialects` must be a non-empty array of {"name": string, "version": string, "mode"?: string}'],
      [`{ dialects: ${agentskills} }`, '`dialects` must be a non-empty array'],
      ["{ dialects: 'agentskills' }", '`dialects` must be a non-empty array'],
      ["{ dialects: ['agentskills'] }", '`dialects[0]` must be {"name": string, "version": string, "mode"?: string} with no other key'],
      ['{ dialects: [null] }', '`dialects[0]`'],
      ["{ dialects: [{ name: 'agentskills', mode: 'strict' }] }", '`dialects[0]`'],
      ["{ dialects: [{ version: '1' }] }", '`dialects[0]`'],
      ["{ dialects: [{ name: 'agentskills', version: 2026, mode: 'strict' }] }", '`dialects[0]`'],
      ["{ dialects: [{ name: '', version: '1' }] }", 'name and version of 1 to 64 bytes'],
      ["{ dialects: [{ name: 'x', version: '' }] }", '`dialects[0]`'],
      ["{ dialects: [{ name: 'x'.repeat(65), version: '1' }] }", '1 to 64 bytes'],
      ["{ dialects: [{ name: 'x', version: 'é'.repeat(33) }] }", '1 to 64 bytes'],
      ["{ dialects: [{ name: '\\uD800', version: '1' }] }", '`dialects[0]`'],
      ["{ dialects: [{ name: 'agentskills', version: '2026-08', mode: 5 }] }", '`dialects[0]`'],
      ["{ dialects: [{ name: 'agentskills', version: '2026-08', mode: 'strict', strict: true }] }", 'with no other key'],
      [`{ dialects: [${agentskills}, 5] }`, '`dialects[1]`'],
      ["{ dialects: [{ name: 'agentskills', version: '2026-08' }] }",
        '`dialects[0]`: dialect "agentskills" needs a `mode`, one of strict, lenient'],
      ["{ dialects: [{ name: 'agentskills', version: '2026-08', mode: 'loose' }] }",
        '`dialects[0]`: dialect "agentskills" has no mode "loose" (its modes: strict, lenient)'],
      ["{ dialects: [{ name: 'portable-skills', version: '1', mode: 'strict' }] }", '`dialects[0]`: dialect "portable-skills" has no modes'],
      [`{ dialects: [${agentskills}, { name: 'agentskills', version: '2026-08', mode: 'lenient' }] }`, '`dialects` claims "agentskills" twice'],
    ]) {
      const r = await declare(p, ++seq, decl);
      assert.deepEqual([r.type, r.seq], ['error', null], decl);
      assert.ok(r.message.includes('misdeclared') && r.message.includes(words), `${decl}: ${r.message}`);
    }
    // Every problem is named at once.
    const r = await declare(p, 90, "{ dialects: [{ name: 'agentskills', version: '2026-08' }, { name: 'portable-skills', version: '1', mode: 'm' }] }");
    for (const words of ['`dialects[0]`: dialect "agentskills" needs a `mode`', '`dialects[1]`: dialect "portable-skills" has no modes']) {
      assert.ok(r.message.includes(words), r.message);
    }
    assert.equal((await declare(p, 99, `{ dialects: [${agentskills}] }`)).type, 'started');
    await cleanExit(p);
  });

  test('a misdeclared runtime refuses the handshake', async () => {
    const p = start("await kit.serve({ name: '', version: 3, features: 'skip-report' });");
    const r = await p.ask({ type: 'start', protocol_version: 2 });
    assert.equal(r.type, 'error');
    for (const part of ['`name`', '`version`', '`features`']) assert.ok(r.message.includes(part), r.message);
    await cleanExit(p);
  });
});

describe('conversation', () => {
  test('seq and index are echoed and results shaped', async () => {
    const p = start(MINIMAL);
    await started(p);
    await openCase(p, 7);
    let r = await step(p, 'discover', { seq: 7, index: 3 });
    assert.deepEqual([r.type, r.seq, r.index], ['step_result', 7, 3]);
    assert.deepEqual(r.result.loaded.map((e) => e.id), ['b', 'a']);
    assert.equal(r.result.loaded[1].format, 'legacy');
    assert.deepEqual(r.result.skipped, [{ path: 'c', reason: 'symlink' }]);
    assert.deepEqual((await step(p, 'tools', { seq: 7, index: 4 })).result, { offered: ['skill_read_reference'] });
    assert.deepEqual((await step(p, 'prompt', { seq: 7, index: 9 })).result, { text: 'text', baseline: 'base' });
    const args = { z: 1, a: [1.5, null, 'é😀'], m: { k: true } };
    r = await step(p, 'call', { seq: 7, index: 10, tool: 't', args });
    assert.equal(r.index, 10);
    assert.deepEqual(r.result, { ok: true, value: { tool: 't', args } });
    assert.deepEqual(Object.keys(r.result.value.args), ['z', 'a', 'm'], 'key order kept');
    assert.deepEqual((await step(p, 'new_turn', { seq: 7, index: 11 })).result, {});
    assert.deepEqual(await p.ask({ type: 'case_end', seq: 7 }), { type: 'case_ended', seq: 7 });
    await openCase(p, 8);
    assert.equal((await step(p, 'tools', { seq: 8 })).seq, 8);
    assert.deepEqual(await p.ask({ type: 'case_end', seq: 8 }), { type: 'case_ended', seq: 8 });
    await cleanExit(p);
  });

  test('call args of any JSON type pass through, and long lines are read whole', async () => {
    const p = start(MINIMAL);
    await started(p);
    await openCase(p);
    for (const args of [null, 'text', [1, 2], 17, {}]) {
      assert.deepEqual((await step(p, 'call', { tool: 't', args })).result.value.args, args);
    }
    const big = 'x'.repeat(5 * 1024 * 1024);
    assert.equal((await step(p, 'call', { tool: 't', args: { path: big } })).result.value.args.path.length, big.length);
    await cleanExit(p);
  });

  test('discover may return any iterable', async () => {
    const p = start(`await kit.serve({ name: 'gen', version: '0', *discover() { yield kit.loaded('b', 'B', 'd', ''); yield kit.loaded('a', 'A', 'd', ''); } });`);
    await started(p);
    await openCase(p);
    assert.deepEqual((await step(p, 'discover')).result.loaded.map((e) => e.id), ['b', 'a']);
    await cleanExit(p);
  });

  test('discover entries of dialect agentskills carry a location and no format', async () => {
    const p = start(`await kit.serve({
  name: 'client', version: '1', dialects: [{ name: 'agentskills', version: '2026-08', mode: 'lenient' }],
  discover() { return [kit.loaded('pdf', 'pdf', 'Reads PDFs.', 'Body.', null, { location: '/r/.agents/skills/pdf/SKILL.md' })]; },
});`);
    await started(p);
    await openCase(p);
    assert.deepEqual((await step(p, 'discover')).result, {
      loaded: [{ id: 'pdf', name: 'pdf', description: 'Reads PDFs.', body: 'Body.', location: '/r/.agents/skills/pdf/SKILL.md' }],
    });
    await cleanExit(p);
  });

  test('skipped entries are sent only with skip-report', async () => {
    const p = start(MINIMAL.replace("features: ['skip-report']", 'features: []'));
    await started(p);
    await openCase(p);
    assert.deepEqual((await step(p, 'discover')).result, {
      loaded: [
        { id: 'b', format: 'portable', name: 'B', description: 'd', body: 'body' },
        { id: 'a', format: 'legacy', name: 'A', description: '', body: '' },
      ],
    });
    await cleanExit(p);
  });

  test('requests out of order are refused with their seq', async () => {
    const p = start(MINIMAL);
    await started(p);
    let r = await step(p, 'tools', { seq: 4 });
    assert.deepEqual([r.type, r.seq], ['error', 4]);
    assert.match(r.message, /not open/);
    await openCase(p, 5);
    r = await p.ask({ type: 'case_start', seq: 6, case: 'x', root: '/', config: CONFIG });
    assert.deepEqual([r.type, r.seq], ['error', 6]);
    r = await p.ask({ type: 'case_end', seq: 6 });
    assert.deepEqual([r.type, r.seq], ['error', 6]);
    assert.equal((await p.ask({ type: 'case_end', seq: 5 })).type, 'case_ended');
    await cleanExit(p);
  });

  test('unknown requests and ops are errors', async () => {
    const p = start(MINIMAL);
    await started(p);
    await openCase(p, 3);
    let r = await step(p, 'dance', { seq: 3, index: 2 });
    assert.deepEqual([r.type, r.seq], ['error', 3]);
    assert.match(r.message, /unknown op/);
    r = await p.ask({ type: 'frobnicate', seq: 3 });
    assert.deepEqual([r.type, r.seq], ['error', 3]);
    assert.match((await p.ask({ type: 'step', seq: 3, step: { op: 'tools' } })).message, /index/);
    assert.match((await p.ask({ type: 'step', seq: 3, index: 0, step: { op: 'call', tool: 't' } })).message, /args/);
    assert.equal((await step(p, 'tools', { seq: 3, index: 5 })).index, 5);
    await cleanExit(p);
  });

  test('validate is dispatched with its path', async () => {
    const p = start(`
import path from 'node:path';
await kit.serve({
  name: 'validator', version: '1', dialects: [{ name: 'agentskills', version: '2026-08', mode: 'strict' }],
  lacks: { scan: 'a validator has no scan' },
  startCase(config, root) { this.root = root; },
  async validate(rel) {
    if (rel === 'fifo') throw new kit.Refused('OSError: SKILL.md is a FIFO');
    if (rel === 'bad') return kit.validation(false, ["Skill name 'Upper' must be lowercase"]);
    return kit.validation(true, [], { name: path.join(this.root, rel), metadata: { a: 'b' } });
  },
});`);
    await started(p);
    await openCase(p);
    let r = await step(p, 'validate', { index: 2, path: 'skills/pdf' });
    assert.deepEqual([r.type, r.index], ['step_result', 2]);
    assert.deepEqual(r.result, { valid: true, problems: [], properties: { name: path.join(tmp, 'skills/pdf'), metadata: { a: 'b' } } });
    assert.deepEqual((await step(p, 'validate', { index: 3, path: 'bad' })).result,
      { valid: false, problems: ["Skill name 'Upper' must be lowercase"] });
    assert.deepEqual((await step(p, 'validate', { index: 4, path: 'fifo' })).refused, { message: 'OSError: SKILL.md is a FIFO' });
    for (const s of [{ op: 'validate' }, { op: 'validate', path: 5 }, { op: 'validate', path: null }]) {
      r = await p.ask({ type: 'step', seq: 1, index: 5, step: s });
      assert.deepEqual([r.type, r.seq], ['error', 1], JSON.stringify(s));
      assert.ok(r.message.includes('`validate` step without a string `path`'), r.message);
    }
    assert.equal((await p.ask({ type: 'case_end', seq: 1 })).type, 'case_ended');
    await cleanExit(p);
  });
});

// Records what the runtime was handed: bad configs must never reach it.
const RECORDING = `
const seen = [];
await kit.serve({
  name: 'recording', version: '0',
  startCase(config) { seen.push(\`startCase \${JSON.stringify([config.tool_allowlist, config.env, config.allow_trading, config.future])}\`); },
  endCase() { seen.push('endCase'); },
  tools() { return seen; },
});`;

describe('case config', () => {
  // [config or a change to CONFIG, what the error names]: every field of PROTOCOL.md's
  // `case_start` table, and of its profiles, with a value of another type.
  const BAD = [
    [{ ...CONFIG, tool_allowlist: 5 }, '`config.tool_allowlist` must be a list of strings or null, got 5'],
    [{ ...CONFIG, tool_allowlist: 'ab' }, '`config.tool_allowlist`'],
    [{ ...CONFIG, tool_allowlist: ['a', 1] }, '`config.tool_allowlist`'],
    [{ ...CONFIG, tool_allowlist: { a: 'b' } }, '`config.tool_allowlist`'],
    [{ ...CONFIG, env: 'ab' }, '`config.env` must be an object of strings, got "ab"'],
    [{ ...CONFIG, env: 5 }, '`config.env`'],
    [{ ...CONFIG, env: null }, '`config.env`'],
    [{ ...CONFIG, env: [['A', 'b']] }, '`config.env`'],
    [{ ...CONFIG, env: { A: 1 } }, '`config.env`'],
    [{ ...CONFIG, skills_root: 5 }, '`config.skills_root` must be a string or null, got 5'],
    [{ ...CONFIG, script_allowlist: [] }, '`config.script_allowlist` must be a string or null, got []'],
    [{ ...CONFIG, allow_trading: 'yes' }, '`config.allow_trading` must be a boolean, got "yes"'],
    [{ ...CONFIG, allow_trading: 1 }, '`config.allow_trading`'],
    [{ ...CONFIG, allow_trading: null }, '`config.allow_trading`'],
    [{ ...CONFIG, python: 7 }, '`config.python` must be a string, got 7'],
    [{ ...CONFIG, python: null }, '`config.python`'],
    [{ ...CONFIG, timeout_ms: 5 }, '`config.timeout_ms` must be a string or null, got 5'],
    [{ ...CONFIG, replay: {} }, '`config.replay` must be a string or null, got {}'],
    [{ ...CONFIG, platform: 1 }, '`config.platform`'],
    [{ ...CONFIG, skill_dirs: 'dirs' }, '`config.skill_dirs` must be an object'],
    [{ ...CONFIG, skill_dirs: { user: 5 } }, '`config.skill_dirs.user` must be a string or null, got 5'],
    [{ ...CONFIG, registry: null }, '`config.registry` must be a string'],
    [{ ...CONFIG, selection: { max_active: '3' } }, '`config.selection.max_active` must be a non-negative integer or null'],
    [{ ...CONFIG, selection: { max_context_tokens: true } }, '`config.selection.max_context_tokens`'],
    [{ ...CONFIG, selection: { max_active: -1 } }, '`config.selection.max_active`'],
    [{ ...CONFIG, selection: { max_active: 1.5 } }, '`config.selection.max_active`'],
    [{ ...CONFIG, hitl: [] }, '`config.hitl` must be an object'],
    [{ ...CONFIG, hitl: { enabled: 'yes' } }, '`config.hitl.enabled` must be a boolean'],
    [{ ...CONFIG, hitl: { script_tool_allowed: 1 } }, '`config.hitl.script_tool_allowed`'],
    [{ ...CONFIG, hitl: { session: null } }, '`config.hitl.session` must be a string'],
    [{ ...CONFIG, hitl: { answers: 'approve' } }, '`config.hitl.answers` must be a list of strings'],
    [{ ...CONFIG, hitl: { timeout_ms: 500 } }, '`config.hitl.timeout_ms` must be a string or null'],
    [{ ...CONFIG, dialect: 5 }, '`config.dialect` must be a string, got 5'],
    [{ ...CONFIG, dialect: null }, '`config.dialect` must be a string'],
    [{ ...CONFIG, dialect: ['agentskills'] }, '`config.dialect`'],
    [{ ...CONFIG, user_skills_root: null }, '`config.user_skills_root` must be a string, got null'],
    [{ ...CONFIG, user_skills_root: {} }, '`config.user_skills_root`'],
    [5, '`config` must be an object, got 5'],
    [[CONFIG], '`config` must be an object'],
    ['config', '`config` must be an object'],
    [null, '`config` must be an object'],
  ];

  test('a config of the wrong type is answered with error and the session goes on', async () => {
    const p = start(RECORDING);
    await started(p);
    for (const [i, [config, words]] of BAD.entries()) {
      const r = await p.ask({ type: 'case_start', seq: i + 1, case: 'x.y', root: tmp, config });
      assert.deepEqual([r.type, r.seq], ['error', i + 1], words);
      assert.ok(r.message.includes(words), `${words}: ${r.message}`);
      assert.ok(r.message.length < 1000);
    }
    // Every problem is named at once, and a bad `root` too.
    const r = await p.ask({ type: 'case_start', seq: 70, case: 'x.y', root: 5, config: { ...CONFIG, python: 7, env: 'ab' } });
    for (const words of ['`root` must be a string, got 5', '`config.python`', '`config.env`']) assert.ok(r.message.includes(words), r.message);
    // The case was never opened: the next case_start is served, and the runtime saw no bad config.
    await openCase(p, 71, tmp, { ...CONFIG, tool_allowlist: ['skill_read_reference'] });
    assert.deepEqual((await step(p, 'tools', { seq: 71 })).result.offered, ['startCase [["skill_read_reference"],{"LANG":"C.UTF-8"},false,null]']);
    assert.equal((await p.ask({ type: 'case_end', seq: 71 })).type, 'case_ended');
    await cleanExit(p);
  });

  test('dialect and user_skills_root reach the runtime as sent', async () => {
    const p = start("await kit.serve({ name: 'd', version: '1', startCase(config) { this.seen = [config.dialect, config.user_skills_root]; }, tools() { return this.seen.map(String); } });");
    await started(p);
    await openCase(p, 1, tmp, { ...CONFIG, dialect: 'agentskills', user_skills_root: '/home/u/.agents/skills' });
    assert.deepEqual((await step(p, 'tools')).result.offered, ['agentskills', '/home/u/.agents/skills']);
    assert.equal((await p.ask({ type: 'case_end', seq: 1 })).type, 'case_ended');
    await openCase(p, 2);
    assert.deepEqual((await step(p, 'tools', { seq: 2 })).result.offered, ['undefined', 'undefined'], 'absent fields stay absent');
    await cleanExit(p);
  });

  test('values of the right types pass whatever they mean', async () => {
    const p = start(RECORDING);
    await started(p);
    const good = {
      ...CONFIG, skills_root: '', script_allowlist: '{not an allowlist', tool_allowlist: [], allow_trading: true, replay: 'on',
      timeout_ms: 'abc', python: 'python3', env: {}, platform: 'no-process-groups', future: { a: 1 },
      skill_dirs: { user: '/u', workspace: null }, registry: '/r', selection: { max_active: 0, max_context_tokens: null },
      hitl: { enabled: false, script_tool_allowed: true, session: 'maybe', answers: ['ok'], timeout_ms: null },
      dialect: 'agentskills', user_skills_root: '/home/u/.agents/skills',
    };
    const minimal = { skills_root: null, python: 'python3', env: { A: 'b' } }; // absent fields stay absent
    for (const [i, config] of [good, minimal].entries()) {
      await openCase(p, i + 1, tmp, config);
      assert.equal((await p.ask({ type: 'case_end', seq: i + 1 })).type, 'case_ended');
    }
    await openCase(p, 3);
    assert.deepEqual((await step(p, 'tools', { seq: 3 })).result.offered.slice(0, 4), [
      'startCase [[],{},true,{"a":1}]', 'endCase', 'startCase [null,{"A":"b"},null,null]', 'endCase']);
    await cleanExit(p);
  });
});

describe('transport', () => {
  for (const mode of ['pipes', 'sockets']) {
    test(`invalid requests are answered with error and the adapter goes on (${mode})`, async () => {
      const p = start(MINIMAL, { mode });
      for (const [bad, words] of [
        [Buffer.from('not json\n'), /not JSON/],
        [Buffer.from('{"type": "start", \n'), /not JSON/],
        [Buffer.from('[1, 2]\n'), /JSON object/],
        [Buffer.from([...Buffer.from('{"type": "st'), 0xff, ...Buffer.from('art"}\n')]), /UTF-8/],
        [Buffer.from('\uFEFF{"type": "start", "protocol_version": 2}\n'), /not JSON/],
        [Buffer.from('{"type": "case_start"}\n'), /seq/],
      ]) {
        p.send(bad);
        const r = await p.recv();
        assert.equal(r.type, 'error', bad.toString());
        assert.match(r.message, words);
      }
      p.send(Buffer.from('\n  \r\n'));
      await started(p);
      await cleanExit(p);
    });
  }

  test('hostile request lines are answered with error and the adapter goes on', async () => {
    const deepArray = '['.repeat(100000) + ']'.repeat(100000);
    const deepObject = '{"a":'.repeat(100000) + '1' + '}'.repeat(100000);
    const deepArgs = `{"type": "step", "seq": 1, "index": 0, "step": {"op": "call", "tool": "t", "args": ${deepArray}}}`;
    const p = start(MINIMAL);
    for (const [bad, words] of [
      [deepArray, /JSON object/],
      [deepObject, /without a valid `seq`/],
      [`{"type": ${deepArray}, "seq": 1}`, /request type/],
      [`{"type": "case_start", "seq": 1, "root": ${deepArray}}`, /root/],
      [deepArgs, /not open/],
      ['"start"', /JSON object/],
      ['42', /JSON object/],
      ['null', /JSON object/],
      ['{"type": "start"', /not JSON/],
    ]) {
      p.send(Buffer.from(`${bad}\n`));
      const r = await p.recv();
      const shown = bad.slice(0, 40);
      assert.equal(r.type, 'error', shown);
      assert.equal(r.seq === null || r.seq === 1, true, shown);
      assert.match(r.message, words, shown);
      assert.ok(r.message.length < 1000, `${shown}: ${r.message.length} characters`);
      await started(p);
    }
    await cleanExit(p);
  });

  const padded = (message, size) => {
    const data = Buffer.from(JSON.stringify(message));
    return Buffer.concat([data, Buffer.alloc(size - data.length, ' ')]);
  };

  test('a request line over the limit is discarded and the next line served', async () => {
    const limit = 100000;
    const p = start(MINIMAL, { env: { SKILLSPEC_KIT_MAX_REQUEST: String(limit) } });
    const hello = { type: 'start', protocol_version: 2 };
    // At the limit a request is served; one byte more and it is not, however valid it is.
    p.send(Buffer.concat([padded(hello, limit), Buffer.from('\n')]));
    assert.equal((await p.recv()).type, 'started');
    p.send(Buffer.concat([padded(hello, limit + 1), Buffer.from('\n')]));
    let r = await p.recv();
    assert.deepEqual([r.type, r.seq], ['error', null], JSON.stringify(r));
    assert.ok(r.message.includes(`request line of ${limit + 1} bytes is over the adapter kit's limit of ${limit} bytes and was discarded`), r.message);
    await started(p);
    // A long line arriving in many pieces, then a request in the same write as its end.
    const size = 37 * limit + 5;
    await p.sendStreaming(size, { chunk: Math.floor(limit / 3), tail: `\n${JSON.stringify({ type: 'case_start', seq: 4, root: '/', config: CONFIG })}\n` });
    r = await p.recv();
    assert.deepEqual([r.type, r.seq], ['error', null], JSON.stringify(r));
    assert.ok(r.message.includes(`of ${size} bytes`), r.message);
    assert.deepEqual(await p.recv(), { type: 'case_started', seq: 4 });
    assert.equal((await p.ask({ type: 'case_end', seq: 4 })).type, 'case_ended');
    // A line over the limit at the end of input, without its newline, is answered too.
    p.send(padded(hello, limit + 1));
    p.child.stdin.end();
    r = await p.recv();
    assert.deepEqual([r.type, r.seq], ['error', null], JSON.stringify(r));
    assert.ok(r.message.includes(`of ${limit + 1} bytes`), r.message);
    await cleanExit(p, false);
  });

  test('a 300 MiB request line takes bounded memory', async () => {
    // The real limit (64 MiB): a kit that held the line would take well over 600 MiB. The kit
    // reports its own peak resident size: Node's own, up to 64 MiB kept before the line is known
    // to be too long, and chunks V8 has not collected yet, all well under the line's 300 MiB.
    const p = start(`await kit.serve({ name: 'peak', version: '0', tools() { return [String(process.resourceUsage().maxRSS)]; } });`);
    const size = 300 * 1024 * 1024;
    await p.sendStreaming(size);
    const r = await p.recv();
    await started(p);
    await openCase(p);
    const peakKib = Number((await step(p, 'tools')).result.offered[0]);
    process.stderr.write(`[a 300 MiB request line: the Node kit's peak RSS was ${(peakKib / 1024).toFixed(1)} MiB]\n`);
    assert.ok(peakKib < 256 * 1024, `the kit's peak resident size: ${peakKib} KiB`);
    assert.deepEqual([r.type, r.seq], ['error', null], JSON.stringify(r));
    assert.ok(r.message.includes(`request line of ${size} bytes is over the adapter kit's limit of ${64 * 1024 * 1024} bytes`), r.message);
    assert.equal(kit.MAX_REQUEST, 64 * 1024 * 1024, 'the limit this test was run with');
    await cleanExit(p);
  });

  const NOISY = `
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
console.log('chatter at import');
process.stdout.write('no newline at import');
await kit.serve({
  name: 'noisy', version: '0',
  startCase(config, root) { console.info('starting', root); console.table([{ a: 1 }]); console.dir({ dir: 'dir-output' }); },
  tools() {
    process.stdout.write(Buffer.from('buffer to stdout\\n'));
    if (process.env.CHILDREN) {
      fs.writeSync(1, 'raw bytes on fd 1\\n');
      spawnSync('sh', ['-c', 'echo from a child; echo child stderr >&2'], { stdio: 'inherit' });
    }
    return [];
  },
  discover() { console.log('x'.repeat(100000)); return []; },
});`;

  test('stdout is protected at the descriptor level (pipes)', async () => {
    process.env.CHILDREN = '1';
    const p = start(NOISY);
    delete process.env.CHILDREN;
    await started(p);
    await openCase(p);
    assert.deepEqual((await step(p, 'tools')).result, { offered: [] });
    assert.deepEqual((await step(p, 'discover', { index: 1 })).result, { loaded: [] });
    assert.equal((await p.ask({ type: 'case_end', seq: 1 })).type, 'case_ended');
    await cleanExit(p);
    for (const text of ['chatter at import', 'no newline at import', 'starting', 'dir-output', 'buffer to stdout',
      'raw bytes on fd 1', 'from a child', 'child stderr']) {
      assert.ok(p.stderr.includes(text), `${text} not on stderr`);
    }
  });

  test('JavaScript writes to stdout are protected on socket pairs too', async () => {
    const p = start(NOISY, { mode: 'sockets' });
    await started(p);
    await openCase(p);
    assert.deepEqual((await step(p, 'tools')).result, { offered: [] });
    assert.deepEqual((await step(p, 'discover', { index: 1 })).result, { loaded: [] });
    await cleanExit(p);
    for (const text of ['chatter at import', 'starting', 'buffer to stdout']) assert.ok(p.stderr.includes(text), text);
  });

  test('stdin is not the runtime\'s and the protocol descriptors are not inherited', async () => {
    // Imports run in order, so this module sees the descriptors before the kit takes them.
    const record = path.join(tmp, 'record-pipes.mjs');
    fs.writeFileSync(record, "import fs from 'node:fs';\nglobalThis.protocolPipes = [fs.readlinkSync('/proc/self/fd/0'), fs.readlinkSync('/proc/self/fd/1')];\n");
    const prelude = `import ${JSON.stringify(record)};\n`;
    const p = start(`
import { spawnSync } from 'node:child_process';
await kit.serve({
  name: 'reader', version: '0',
  async tools() {
    let input = '';
    for await (const chunk of process.stdin) input += chunk;
    const child = spawnSync('sh', ['-c', 'cat; for f in /proc/$$/fd/*; do readlink "$f"; done'], { stdio: ['inherit', 'pipe', 'inherit'] });
    return [JSON.stringify(input), ...globalThis.protocolPipes, ...child.stdout.toString().trim().split('\\n')];
  },
});`, { prelude });
    await started(p);
    await openCase(p);
    const [input, protoIn, protoOut, ...childLinks] = (await step(p, 'tools')).result.offered;
    assert.equal(input, '""');
    assert.match(protoIn, /^pipe:/);
    assert.match(protoOut, /^pipe:/);
    assert.equal(childLinks[0], '/dev/null', 'the child\'s stdin');
    assert.ok(!childLinks.includes(protoIn) && !childLinks.includes(protoOut), childLinks.join(' '));
    await cleanExit(p);
  });

  test('answers that are not UTF-8 JSON become errors', async () => {
    const p = start(`
const cyclic = {}; cyclic.self = cyclic;
await kit.serve({
  name: 'bad-values', version: '0',
  discover() { return [kit.loaded('caf\\uDCE9', 'n', '', '')]; },
  call(tool) {
    const values = { nan: NaN, big: 10n, map: new Map(), cycle: cyclic, huge: 'y'.repeat(17 * 1024 * 1024) };
    return kit.ok({ v: values[tool] });
  },
});`);
    await started(p);
    await openCase(p, 2);
    let r = await step(p, 'discover', { seq: 2 });
    assert.deepEqual([r.type, r.seq], ['error', 2]);
    assert.match(r.message, /result\.loaded\[0\]\.id .*lone surrogate/);
    for (const [tool, words] of [['nan', /NaN/], ['big', /bigint/], ['map', /Map/], ['cycle', /cycle/], ['huge', /line limit/]]) {
      r = await step(p, 'call', { seq: 2, tool, args: {} });
      assert.deepEqual([r.type, r.seq], ['error', 2], tool);
      assert.match(r.message, words);
    }
    assert.equal((await p.ask({ type: 'case_end', seq: 2 })).type, 'case_ended');
    await cleanExit(p);
  });
});

describe('failures', () => {
  test('exceptions become errors with the stack on stderr', async () => {
    const p = start(`
await kit.serve({
  name: 'throws', version: '0',
  discover() { return null.missingProperty4711; },
  async tools() { await null; throw new RangeError('async failure'); },
  prompt() { throw new kit.AdapterError('this runtime has no prompt to show'); },
  call() { process.exit(3); },
  newTurn() {
    setTimeout(() => { throw new Error('background failure'); }, 0);
    Promise.reject(new Error('unhandled rejection'));
  },
});`);
    await started(p);
    await openCase(p, 9);
    let r = await step(p, 'discover', { seq: 9, index: 1 });
    assert.deepEqual([r.type, r.seq], ['error', 9]);
    assert.match(r.message, /discover\(\) threw TypeError/);
    assert.match((await step(p, 'tools', { seq: 9, index: 2 })).message, /tools\(\) threw RangeError: async failure/);
    assert.equal((await step(p, 'prompt', { seq: 9, index: 3 })).message, 'this runtime has no prompt to show');
    assert.match((await step(p, 'call', { seq: 9, index: 4, tool: 't', args: {} })).message, /process\.exit\(3\)/);
    assert.deepEqual((await step(p, 'new_turn', { seq: 9, index: 5 })).result, {});
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal((await p.ask({ type: 'case_end', seq: 9 })).type, 'case_ended');
    await cleanExit(p);
    assert.match(p.stderr, /missingProperty4711/);
    assert.match(p.stderr, /background failure/);
    assert.match(p.stderr, /unhandled rejection/);
    assert.ok(!p.stderr.includes('this runtime has no prompt'), 'AdapterError carries no stack');
  });

  test('a failed startCase is cleaned up and the next case runs', async () => {
    const marker = path.join(tmp, `ended-${counter++}`);
    const p = start(`
import fs from 'node:fs';
await kit.serve({
  name: 'flaky', version: '0',
  async startCase(config) { if (config.env.FAIL) throw new Error('cannot start'); },
  endCase() { fs.appendFileSync(${JSON.stringify(marker)}, 'ended\\n'); },
});`);
    await started(p);
    const r = await p.ask({ type: 'case_start', seq: 1, case: 'x', root: '/', config: { ...CONFIG, env: { FAIL: '1' } } });
    assert.deepEqual([r.type, r.seq], ['error', 1]);
    assert.match(r.message, /Error: cannot start/);
    await openCase(p, 2);
    assert.equal((await p.ask({ type: 'case_end', seq: 2 })).type, 'case_ended');
    await cleanExit(p);
    assert.equal(fs.readFileSync(marker, 'utf8'), 'ended\nended\n');
  });

  test('unimplemented methods answer honestly', async () => {
    const p = start("await kit.serve({ name: 'bare', version: '0' });");
    await started(p);
    await openCase(p);
    for (const [index, [op, method]] of [['discover', 'discover'], ['tools', 'tools'], ['prompt', 'prompt'], ['new_turn', 'newTurn'],
      ['validate', 'validate']].entries()) {
      const r = await step(p, op, { index, ...(op === 'validate' ? { path: 'skills/a' } : {}) });
      assert.equal(r.type, 'error', op);
      assert.ok(r.message.includes(`${method}() is not implemented`), r.message);
    }
    const r = await step(p, 'call', { index: 9, tool: 'skill_read_reference', args: {} });
    assert.equal(r.result.ok, false);
    assert.equal(r.result.error.code, 'unknown_tool');
    assert.equal((await p.ask({ type: 'case_end', seq: 1 })).type, 'case_ended');
    await cleanExit(p);
  });

  test('results of the wrong shape are adapter bugs', async () => {
    const p = start(`
await kit.serve({
  name: 'sloppy', version: '0',
  discover() { return this.located ? [kit.loaded('a', 'a', '', '', null, { location: 5 })] : [{ id: 'a', format: 'modern' }]; },
  tools() { this.located = true; return 'skill_read_reference'; },
  prompt() { return ['text', 'baseline']; },
  call(tool) { return tool === 'a' ? { ok: false, error: 'not_found' } : kit.skipped('x', 'nonsense'); },
});`);
    await started(p);
    await openCase(p);
    for (const [op, fields, words] of [
      ['discover', {}, 'portable or legacy'],
      ['tools', {}, 'array of tool names'],
      ['prompt', {}, '{text, baseline}'],
      ['call', { tool: 'a', args: {} }, 'ok({...}) or error(code'],
      ['call', { tool: 'b', args: {} }, 'ok({...}) or error(code'],
      ['discover', {}, 'needs string name/description/body/location'],
    ]) {
      const r = await step(p, op, fields);
      assert.equal(r.type, 'error', op);
      assert.ok(r.message.includes('adapter bug') && r.message.includes(words), r.message);
    }
    await cleanExit(p);
  });

  test('a validate result of the wrong shape is an adapter bug', async () => {
    // The test sends each answer as the path; the adapter returns it parsed.
    const p = start("await kit.serve({ name: 'sloppy-validator', version: '0', validate(rel) { return JSON.parse(rel); } });");
    await started(p);
    await openCase(p);
    for (const [index, value] of [
      null, true, [true, []],
      { valid: true }, { problems: [] },
      { valid: 'yes', problems: [] }, { valid: 1, problems: [] },
      { valid: false, problems: 'Skill name must be lowercase' }, { valid: false, problems: ['a', 5] }, { valid: false, problems: null },
      { valid: true, problems: [], properties: null }, { valid: true, problems: [], properties: [['name', 'a']] },
      { valid: true, problems: [], properties: 'name: a' }, { valid: true, problems: [], errors: [] },
    ].entries()) {
      const r = await step(p, 'validate', { index, path: JSON.stringify(value) });
      assert.deepEqual([r.type, r.seq], ['error', 1], JSON.stringify(value));
      assert.ok(r.message.includes('adapter bug: validate() must return validation(...), {"valid": boolean, "problems": [string], "properties"?: {...}}')
        && r.message.includes('with no other key'), r.message);
    }
    // The session goes on: a good answer after the bad ones.
    const good = { valid: true, problems: [], properties: {} };
    assert.deepEqual((await step(p, 'validate', { index: 20, path: JSON.stringify(good) })).result, good);
    await cleanExit(p);
  });
});

describe('stop', () => {
  test('stop ends the open case and exits without a word', async () => {
    const marker = path.join(tmp, `ended-${counter++}`);
    const p = start(`
import fs from 'node:fs';
setInterval(() => {}, 1000); // a handle that would keep a process alive
await kit.serve({ name: 's', version: '0', endCase() { fs.appendFileSync(${JSON.stringify(marker)}, 'x'); } });`);
    await started(p);
    await openCase(p);
    await cleanExit(p);
    assert.equal(fs.readFileSync(marker, 'utf8'), 'x');
  });

  test('end of input is a stop', async () => {
    const p = start(MINIMAL);
    await started(p);
    await openCase(p);
    await cleanExit(p, false);
  });

  test('nothing after stop is read', async () => {
    const p = start(MINIMAL);
    await started(p);
    p.send(Buffer.from('{"type":"stop"}\n{"type":"start","protocol_version":2}\n'));
    await cleanExit(p, false);
  });
});

const REFUSING = `
class Native extends Error { constructor(m) { super(m); this.name = 'Native'; } }
const READ = new kit.MappedTool('skill_read_reference', 'read_skill_resource', {
  args: { skill: 'skill_name', path: 'resource_name' },
  result: { skill_name: 'skill', resource_name: 'path', text: 'content' } });
await kit.serve({
  name: 'refusing', version: '1', toolNames: kit.MappedTool.names(READ),
  startCase(config) { if (config.skills_root === null) throw new kit.Refused(new Native('no skills directory')); },
  discover() { throw new kit.Refused('scan aborted: SKILL.md is a FIFO'); },
  tools() { return ['skill_read_reference']; },
  call(tool, args) {
    const native = READ.nativeArgs(args);
    if (native.resource_name.startsWith('..')) return kit.refusal('invalid_path', new Native('resource outside the skill'));
    if (native.resource_name === 'deny') throw new kit.Refused(new Native('sandbox denied the call'));
    return kit.ok(READ.specValue({ ...native, text: 'hi' }));
  },
  newTurn() {},
  endCase() { console.log('endCase ran'); },
});`;

describe('refusals and native names', () => {
  test('toolNames are declared, and a misdeclared one refuses the handshake', async () => {
    const p = start(REFUSING);
    assert.deepEqual((await started(p)).implementation.tool_names, { skill_read_reference: 'read_skill_resource' });
    await cleanExit(p);
    const bad = start("await kit.serve({ name: 'a', version: '1', toolNames: { read_file: 'x' } });");
    const r = await bad.ask({ type: 'start', protocol_version: 2 });
    assert.equal(r.type, 'error');
    assert.match(r.message, /`toolNames`/);
    await cleanExit(bad);
  });

  test('activate_skill is a spec tool a native name maps', async () => {
    assert.ok(kit.SPEC_TOOLS.includes('activate_skill'));
    const activate = new kit.MappedTool('activate_skill', 'Skill', { args: { name: 'command' } });
    assert.deepEqual(activate.nativeArgs({ name: 'pdf' }), { command: 'pdf' });
    const p = start("await kit.serve({ name: 'a', version: '1', toolNames: { activate_skill: 'Skill' } });");
    assert.deepEqual((await started(p)).implementation.tool_names, { activate_skill: 'Skill' });
    await cleanExit(p);
  });

  test('a refused step is answered with refused and the runtime\'s message', async () => {
    const p = start(REFUSING);
    await started(p);
    await openCase(p, 1, tmp, { ...CONFIG, skills_root: tmp });
    assert.deepEqual(await step(p, 'discover'),
      { type: 'step_result', seq: 1, index: 0, refused: { message: 'scan aborted: SKILL.md is a FIFO' } });
    const call = (rel) => step(p, 'call', { index: 1, tool: 'skill_read_reference', args: { skill: 'a', path: rel } });
    assert.deepEqual((await call('deny')).refused, { message: 'Native: sandbox denied the call' });
    assert.deepEqual((await call('../x.md')).result, { ok: false, error: { code: 'invalid_path', message: 'Native: resource outside the skill' } });
    assert.deepEqual((await call('references/a.md')).result, { ok: true, value: { skill: 'a', path: 'references/a.md', content: 'hi' } });
    assert.equal((await p.ask({ type: 'case_end', seq: 1 })).type, 'case_ended');
    await cleanExit(p);
  });

  test('a refused start refuses every step and the case still ends', async () => {
    const p = start(REFUSING);
    await started(p);
    const r = await p.ask({ type: 'case_start', seq: 1, case: 'x.y', root: tmp, config: CONFIG });
    assert.deepEqual(r, { type: 'case_started', seq: 1, refused: { message: 'Native: no skills directory' } });
    for (const [index, op] of ['tools', 'discover', 'new_turn'].entries()) {
      assert.deepEqual((await step(p, op, { index })).refused, { message: 'Native: no skills directory' });
    }
    assert.equal((await p.ask({ type: 'case_end', seq: 1 })).type, 'case_ended');
    await openCase(p, 2, tmp, { ...CONFIG, skills_root: tmp });
    assert.ok('result' in (await step(p, 'tools', { seq: 2 })));
    await cleanExit(p);
    assert.equal(p.stderr.split('endCase ran').length - 1, 2);
  });

  test('refusal() and Refused carry the runtime\'s message and never one of their own', () => {
    assert.deepEqual(kit.refusal('not_found', new Error('gone'), { path: 'x' }),
      { ok: false, error: { code: 'not_found', message: 'Error: gone', path: 'x' } });
    assert.equal(kit.refusal('denied', 'user said no').error.message, 'user said no');
    for (const bad of ['', '  ', null, 3, undefined]) {
      assert.throws(() => kit.refusal('invalid_path', bad), TypeError);
      assert.throws(() => new kit.Refused(bad), TypeError);
    }
    assert.throws(() => kit.refusal('invalid_path', 'm', { message: "the adapter's own" }), TypeError);
    assert.equal(new kit.Refused(new Error('EMFILE')).message, 'Error: EMFILE');
  });

  test('MappedTool renames and passes the rest through', () => {
    const run = new kit.MappedTool('skill_run_script', 'run_native', {
      args: { script: 'path' },
      reshape: (a) => (a && typeof a === 'object' && !Array.isArray(a) ? { ...a, args: Object.fromEntries((a.args ?? []).map((v, i) => [String(i), v])) } : a),
    });
    assert.deepEqual(run.nativeArgs({ skill: 's', script: 'scripts/x.py', args: ['a', 'b'], cwd: '/' }),
      { skill: 's', path: 'scripts/x.py', args: { 0: 'a', 1: 'b' }, cwd: '/' });
    assert.deepEqual(run.nativeArgs([1]), [1]);
    assert.equal(kit.renameKeys('x', { a: 'b' }), 'x');
    assert.deepEqual(kit.MappedTool.names(run), { skill_run_script: 'run_native' });
    assert.throws(() => new kit.MappedTool('read_file', 'x'), TypeError);
  });

  test('timeoutMs reads the setting as SPEC.md run.timeout does', () => {
    for (const [text, ms] of [['500', 500], ['0500', 500], ['86400000', 86400000], [null, 30000], ['', 30000], ['0', 30000],
      ['-5', 30000], ['+5', 30000], [' 300', 30000], ['1.5', 30000], ['1e3', 30000], ['86400001', 30000], ['\u0661', 30000]]) {
      assert.equal(kit.timeoutMs(text), ms, String(text));
    }
  });
});

describe('example runtime', () => {
  let root;
  before(() => {
    root = fs.mkdtempSync(path.join(tmp, 'case-'));
    fs.mkdirSync(path.join(root, 'skills', 'weather', 'references'), { recursive: true });
    fs.writeFileSync(path.join(root, 'skills', 'weather', 'SKILL.md'), '---\nname: Weather\ndescription: forecasts\n---\nUse it.\n');
    fs.writeFileSync(path.join(root, 'skills', 'weather', 'references', 'a.md'), 'alpha\n');
  });

  test('the toy runtime answers a case', async () => {
    const p = new Proc(path.join(HERE, 'example-runtime.mjs'));
    assert.equal((await started(p)).implementation.name, 'toy-node-runtime');
    await openCase(p, 1, root, { ...CONFIG, skills_root: path.join(root, 'skills') });
    assert.deepEqual((await step(p, 'discover')).result.loaded,
      [{ id: 'weather', format: 'portable', name: 'Weather', description: 'forecasts', body: 'Use it.' }]);
    assert.deepEqual((await step(p, 'tools', { index: 1 })).result, { offered: ['skill_read_reference'] });
    const read = async (rel) => (await step(p, 'call', { index: 2, tool: 'skill_read_reference', args: { skill: 'weather', path: rel } })).result;
    assert.deepEqual(await read('references/a.md'), { ok: true, value: { skill: 'weather', path: 'references/a.md', content: 'alpha\n' } });
    const missing = (await read('references/b.md')).error;
    assert.equal(missing.code, 'not_found');
    assert.match(missing.message, /rule 7/);
    assert.equal((await read('../x.md')).error.code, 'invalid_path');
    assert.match((await step(p, 'prompt', { index: 3 })).result.text, /`weather`/);
    assert.equal((await p.ask({ type: 'case_end', seq: 1 })).type, 'case_ended');
    await cleanExit(p);
    assert.match(p.stderr, /1 skills loaded/);
  });
});

describe('helpers', () => {
  const ERRORS = new kit.ErrorMap([
    kit.rule(/^Error: unknown skill/, 'unknown_skill', 'registry.get throws it'),
    kit.rule('not allowed', 'invalid_path', 'the runtime says it for every path rule', { guess: true }),
    kit.rule(/exited with (?<status>\d+)/, 'script_failed', 'runner.ts', { fields: (m) => ({ exit_code: Number(m.groups.status) }) }),
    kit.rule(/allowed/g, 'not_approved', "never reached for 'not allowed': the first rule wins"),
  ]);

  test('the first matching rule decides and says so', () => {
    const e = ERRORS.error('path not allowed: ../x').error;
    assert.equal(e.code, 'invalid_path');
    assert.match(e.message, /rule 2/);
    assert.match(e.message, /GUESS: the runtime says it for every path rule/);
    const certain = ERRORS.error(new Error('unknown skill x')).error;
    assert.equal(certain.code, 'unknown_skill');
    assert.ok(!certain.message.includes('GUESS'));
    assert.equal(ERRORS.error('never allowed').error.code, 'not_approved');
    assert.equal(ERRORS.error('never allowed').error.code, 'not_approved', 'a /g pattern keeps no state');
  });

  test('fields come from the rule and the caller', () => {
    const e = ERRORS.error('helper exited with 3', { stderr: 'boom' }).error;
    assert.deepEqual([e.code, e.exit_code, e.stderr], ['script_failed', 3, 'boom']);
    assert.equal(ERRORS.error('x exited with 2', { message: 'mine' }).error.message, 'mine');
  });

  test('an unmapped error is not guessed', () => {
    assert.throws(() => ERRORS.error(new TypeError('something new')), (e) => e instanceof kit.Unmapped && e.text === 'TypeError: something new');
    assert.equal(ERRORS.code('something new'), null);
    const fallback = new kit.ErrorMap([kit.rule('a', 'b')], { default: 'not_found' });
    const e = fallback.error('zzz').error;
    assert.equal(e.code, 'not_found');
    assert.match(e.message, /no rule matched/);
    assert.throws(() => new kit.ErrorMap([{ pattern: 'x' }]), TypeError);
  });

  test('the table shows every rule and marks guesses', () => {
    const table = ERRORS.table().split('\n');
    assert.equal(table.length, 2 + 4 + 1);
    assert.ok(table[3].startsWith('| 2 | `/not allowed/` | `invalid_path` | GUESS |'), table[3]);
    assert.ok(table[2].includes('| yes |'));
    assert.ok(table.at(-1).includes('protocol `error` (unmapped)'));
  });

  test('result helpers', () => {
    assert.deepEqual(kit.ok({ a: 1 }), { ok: true, value: { a: 1 } });
    assert.deepEqual(kit.error('not_approved', { hint: 'ask', approved_scripts: [] }),
      { ok: false, error: { code: 'not_approved', hint: 'ask', approved_scripts: [] } });
    assert.equal(kit.loaded('a', 'A', 'd', 'b', 'legacy').format, 'legacy');
    assert.deepEqual(kit.skipped('x/y', 'too_deep'), { path: 'x/y', reason: 'too_deep' });
    assert.deepEqual(kit.loaded('a', 'A', 'd', 'b', null, { location: '/s/a/SKILL.md' }),
      { id: 'a', name: 'A', description: 'd', body: 'b', location: '/s/a/SKILL.md' });
    assert.deepEqual(kit.validation(false, ['too long']), { valid: false, problems: ['too long'] });
    assert.deepEqual(kit.validation(true, [], { name: 'a' }), { valid: true, problems: [], properties: { name: 'a' } });
    assert.deepEqual(kit.validation(true, [], {}), { valid: true, problems: [], properties: {} });
  });

  test('runtimeEnv adds only what is unset and never PATH', () => {
    const config = { ...CONFIG, env: { HOME: '/h', LANG: 'C' } };
    assert.deepEqual(kit.runtimeEnv(config, { HOME: '/other', XDG_CACHE_HOME: '/c' }), { HOME: '/h', LANG: 'C', XDG_CACHE_HOME: '/c' });
    assert.throws(() => kit.runtimeEnv(config, { PATH: '/usr/bin' }), /PATH/);
    assert.equal(kit.runtimeEnv({ ...CONFIG, env: { PATH: '/p' } }, { PATH: '/q' }).PATH, '/p');
  });
});
