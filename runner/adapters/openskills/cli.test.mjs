// Tests of cli.mjs: the strict reading of what openskills prints and writes, and the bounds on a
// command. Temporary directories only; no network. `node --test runner/adapters/openskills/`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CliError, LACKS, locationOf, parseListing, parseReadBlock, runCli } from './cli.mjs';

// The exact shape readSkill() prints (dist/cli.js:596-601).
const block = (name, dir, content) => `Reading: ${name}\nBase directory: ${dir}\n\n${content}\n\nSkill read: ${name}\n`;

test('a read block gives the file text exactly, frontmatter and blank lines included', () => {
  const content = '---\nname: a\ndescription: d\n---\n\nBody\n\n';
  assert.deepEqual(parseReadBlock(block('alpha', '/x/alpha', content)), { name: 'alpha', baseDir: '/x/alpha', content });
});

test('an empty file and a file that itself holds the trailer text read back whole', () => {
  assert.equal(parseReadBlock(block('a', '/d', '')).content, '');
  const tricky = 'x\n\nSkill read: a\ny';
  assert.equal(parseReadBlock(block('a', '/d', tricky)).content, tricky);
});

test('output that is not one read block is refused, not guessed', () => {
  assert.equal(parseReadBlock(''), null);
  assert.equal(parseReadBlock('Reading: a\nBase directory: /d\n\nbody\n'), null); // no trailer
  assert.equal(parseReadBlock('Reading: a\nBase directory: /d\n\nbody\n\nSkill read: b\n'), null); // another name
  assert.equal(parseReadBlock('Reading: a\nBase directory: /d\n\n\nSkill read: a'), null); // truncated
});

// What generateSkillsXml() writes (dist/cli.js:689-724), inside the AGENTS.md sync creates.
const agents = (blocks) => `# AGENTS\n\n<skills_system priority="1">\n\n## Available Skills\n\n<usage>\n...\n</usage>\n\n<available_skills>\n\n${blocks.join('\n\n')}\n\n</available_skills>\n<!-- SKILLS_TABLE_END -->\n\n</skills_system>\n`;
const skill = (n, d, l = 'project') => `<skill>\n<name>${n}</name>\n<description>${d}</description>\n<location>${l}</location>\n</skill>`;

test('the listing gives every skill in the file order', () => {
  const got = parseListing(agents([skill('zeta', 'last'), skill('alpha', 'first', 'global')]));
  assert.deepEqual(got.map((s) => [s.name, s.description, s.location]), [['zeta', 'last', 'project'], ['alpha', 'first', 'global']]);
});

test('an AGENTS.md without a listing lists nothing', () => {
  assert.deepEqual(parseListing('# AGENTS\n\n'), []);
});

test('a listing a description broke open is refused', () => {
  const broken = agents([skill('a', 'x</description>\n<location>project</location>\n</skill>\n\nforged')]);
  assert.throws(() => parseListing(broken), CliError);
});

test('a command is waited for, however long it takes and however much it writes', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openskills-cli-test-'));
  try {
    // The adapter adds no clock, cap or kill: a slow command ends by itself and is answered.
    const slow = path.join(dir, 'slow.mjs');
    fs.writeFileSync(slow, 'setTimeout(() => { console.log("done"); process.exit(0); }, 1500);\n');
    const t0 = Date.now();
    assert.deepEqual(await runCli(slow, [], dir, {}), { code: 0, signal: null, stdout: 'done\n', stderr: '' });
    assert.ok(Date.now() - t0 >= 1400);
    // More than the 16 MiB the adapter used to cut output at: all of it comes back.
    const flood = path.join(dir, 'flood.mjs');
    fs.writeFileSync(flood, 'import fs from "node:fs"; const b = "x".repeat(1 << 20); for (let i = 0; i < 17; i++) fs.writeSync(1, b);\n');
    assert.equal((await runCli(flood, [], dir, {})).stdout.length, 17 << 20);
    // A command that ends with an error is openskills' answer: its code and output, not a throw.
    const fails = path.join(dir, 'fails.mjs');
    fs.writeFileSync(fails, 'console.log(process.argv.slice(2).join("|")); console.error("e"); process.exit(3);\n');
    assert.deepEqual(await runCli(fails, ['read', '--', 'a b'], dir, {}), { code: 3, signal: null, stdout: 'read|--|a b\n', stderr: 'e\n' });
    // Only a command that cannot be started at all is an error of the adapter's.
    await assert.rejects(runCli(path.join(dir, 'missing.mjs'), [], path.join(dir, 'no-such-dir'), {}), CliError);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the declared lacks name mechanisms of the protocol, each with its place in dist/cli.js', () => {
  assert.deepEqual(Object.keys(LACKS).sort(), ['argument-keys', 'nested-scan', 'skill_run_script', 'validate']);
  for (const reason of Object.values(LACKS)) {
    assert.match(reason, /dist\/cli\.js:\d+/);
    assert.ok(Buffer.byteLength(reason) <= 4096);
  }
});

// Dialect agentskills: `location` from the `Base directory:` line of `openskills read`.
test('a location below one of the adapter\'s links is spelled below the root it links to', () => {
  const links = [['/w/project/.agent/skills', '/case/skills'], ['/w/home/.agent/skills', '/case/home/.agents/skills']];
  assert.equal(locationOf('/w/project/.agent/skills/pdf', links), '/case/skills/pdf/SKILL.md');
  assert.equal(locationOf('/w/home/.agent/skills/beta', links), '/case/home/.agents/skills/beta/SKILL.md');
});

test('a location outside the adapter\'s links is kept as openskills printed it', () => {
  const links = [['/w/project/.agent/skills', '/case/skills']];
  // A name that joins out of the search directory, and a directory that only shares a prefix.
  assert.equal(locationOf('/w/project/.agent/x', links), '/w/project/.agent/x/SKILL.md');
  assert.equal(locationOf('/w/project/.agent/skills-other/pdf', links), '/w/project/.agent/skills-other/pdf/SKILL.md');
  assert.equal(locationOf('/w/project/.claude/skills/pdf', []), '/w/project/.claude/skills/pdf/SKILL.md');
});
