#!/usr/bin/env node
// A toy skill runtime plugged into the conformance suite through the Node adapter kit.
//
// `ToyHost` stands for the runtime under test (in a real adapter it is imported from its
// package): it loads portable skills from the root's direct children only, offers
// `skill_read_reference` alone (filtered by the operator's tool allowlist), throws its own errors
// for refused reads and unknown tools and chats on stdout, as real runtimes do. The object passed
// to `kit.serve` is all an adapter author writes: the calls into the runtime and the table that
// turns its errors into SPEC.md's codes. It maps, it never decides: every code it returns comes
// from an error the runtime threw, whose text travels in `message`.
//
//     skillspec run --adapter "node runner/adapters/kit/node/example-runtime.mjs" --filter read
//
// It is not meant to pass the suite (no legacy skills, no depth, no skill_run_script, no turn
// memory); it speaks the protocol flawlessly, so every case is a PASS or a FAIL, never an ERROR.
import * as kit from './skillspec-kit.mjs'; // first: it takes over stdout before the runtime talks
import fs from 'node:fs';
import path from 'node:path';

console.log('toy runtime: module loaded'); // lands on stderr, not in the protocol

const CAP = 262144;
const BASE = 'You are a toy assistant.';

class ToyError extends Error {
  constructor(message) { super(message); this.name = 'ToyError'; }
}

/** The bytes of a regular file that is not a symlink, at most CAP + 1 (to see more). */
function readRegular(file) {
  const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  const fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    if (!fs.fstatSync(fd).isFile()) throw new ToyError('path not allowed: not a regular file');
    const buf = Buffer.alloc(CAP + 1);
    let n = 0;
    for (let got; n < buf.length && (got = fs.readSync(fd, buf, n, buf.length - n)) > 0;) n += got;
    return buf.subarray(0, n);
  } finally {
    fs.closeSync(fd);
  }
}

class ToyHost {
  constructor(skillsDir, toolAllowlist = null) {
    this.root = skillsDir;
    this.allow = toolAllowlist;
    this.scan();
  }

  scan() {
    this.guides = new Map();
    if (!this.root || !path.isAbsolute(this.root) || !fs.existsSync(this.root)) return;
    for (const name of fs.readdirSync(this.root).sort()) {
      const dir = path.join(this.root, name);
      try {
        if (!fs.lstatSync(dir).isDirectory() || !fs.lstatSync(path.join(dir, 'SKILL.md')).isFile()) continue;
        const text = new TextDecoder('utf-8', { fatal: true }).decode(readRegular(path.join(dir, 'SKILL.md')));
        const end = text.indexOf('\n---\n');
        if (!text.startsWith('---\n') || end < 0) continue;
        const meta = Object.fromEntries(text.slice(4, end).split('\n').filter((l) => l.includes(':'))
          .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]));
        if (meta.name && meta.description) this.guides.set(name, [meta.name, meta.description, text.slice(end + 5).trim()]);
      } catch {
        // unreadable, not UTF-8, not a skill: the toy skips it
      }
    }
    console.log(`toy runtime: ${this.guides.size} skills loaded`);
  }

  tools() {
    const offered = this.guides.size ? ['skill_read_reference'] : [];
    return offered.filter((t) => this.allow === null || this.allow === undefined || this.allow.includes(t));
  }

  call(tool, args) {
    if (!this.tools().includes(tool)) throw new ToyError(`unknown tool ${tool}`);
    return this.read(args);
  }

  read(args) {
    if (args === null || typeof args !== 'object' || Array.isArray(args) || Object.keys(args).sort().join() !== 'path,skill'
      || typeof args.skill !== 'string' || typeof args.path !== 'string') throw new ToyError('bad arguments');
    const { skill, path: rel } = args;
    if (!this.guides.has(skill)) throw new ToyError(`no skill named ${skill}`);
    const parts = rel.split('/');
    if ((rel !== 'SKILL.md' && parts[0] !== 'references') || parts.some((p) => ['', '.', '..'].includes(p))
      || /[\\:\u0000-\u001f\u007f-\u009f]/.test(rel) || !/.\.(md|txt|json|yaml|yml)$/.test(parts.at(-1))) {
      throw new ToyError(`path not allowed: ${rel}`);
    }
    let here = path.join(this.root, skill);
    for (const part of parts.slice(0, -1)) {
      here = path.join(here, part);
      if (fs.lstatSync(here).isSymbolicLink()) throw new ToyError(`path not allowed: symlink ${part}`);
    }
    const data = readRegular(path.join(here, parts.at(-1)));
    if (data.length > CAP) throw new ToyError('file too large');
    return { skill, path: rel, content: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(data) };
  }
}

const ERRORS = new kit.ErrorMap([
  kit.rule(/^ToyError: bad arguments/, 'invalid_args', 'ToyHost.read checks the argument object'),
  kit.rule(/^ToyError: no skill named/, 'unknown_skill', 'ToyHost.read, for an id it did not load'),
  kit.rule(/^ToyError: path not allowed/, 'invalid_path', "ToyHost.read's path rules, symlinks, non-regular files"),
  kit.rule(/^ToyError: file too large/, 'too_large', "ToyHost.read's size cap"),
  kit.rule(/^TypeError: The encoded data was not valid/, 'not_text', 'TextDecoder with fatal: true'),
  kit.rule(/^Error: ELOOP/, 'invalid_path', 'O_NOFOLLOW met a symlinked leaf'),
  kit.rule(/^Error: (ENOENT|ENOTDIR|EACCES)/, 'not_found', 'a missing or unreadable file, SPEC.md read step 5'),
  kit.rule(/^Error: E[A-Z]+/, 'not_found', "any other system error; SPEC.md has no closer code", { guess: true }),
  kit.rule(/^ToyError: unknown tool/, 'unknown_tool', 'ToyHost.call, for a tool it does not offer'),
]);

await kit.serve({
  name: 'toy-node-runtime',
  version: '0.1',

  startCase(config) {
    this.host = new ToyHost(config.skills_root, config.tool_allowlist);
  },

  discover() {
    this.host.scan();
    return [...this.host.guides].map(([id, [name, description, body]]) => kit.loaded(id, name, description, body));
  },

  tools() {
    return this.host.tools();
  },

  prompt() {
    const legacy = [BASE];
    if (this.host.guides.size) {
      legacy.push("## Skill Guides\n\nFollow these guides when they are relevant to the user's request.");
      for (const [name, description, body] of this.host.guides.values()) legacy.push(`### ${name}\n\n${description}\n\n${body}`);
    }
    if (!this.tools().length) return { text: legacy.join('\n\n'), baseline: legacy.join('\n\n') };
    const text = [BASE, '## Skill Guides\n\nRead a guide\'s files with skill_read_reference(skill, path).'];
    for (const [id, [name, description, body]] of this.host.guides) text.push(`### \`${id}\`: ${name}\n\n${description}\n\n${body}`);
    return { text: text.join('\n\n'), baseline: legacy.join('\n\n') };
  },

  call(tool, args) {
    try {
      return kit.ok(this.host.call(tool, args));
    } catch (e) {
      return ERRORS.error(e);
    }
  },

  newTurn() {}, // the toy keeps nothing per turn
});
