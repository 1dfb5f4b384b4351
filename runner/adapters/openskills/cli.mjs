// The command line of openskills 1.5.0 as the adapter uses it: running `node dist/cli.js ...`
// (waited for, never bounded or killed by the adapter), and reading back what `read` prints and
// what `sync` writes.
// Pure of any protocol (adapter.mjs does that); its tests are cli.test.mjs.
import { spawn } from 'node:child_process';

/**
 * The mechanisms openskills 1.5.0 does not have, each with the place in `dist/cli.js` that shows
 * it (the adapter's `lacks` declaration; README.md, "Declarations").
 */
export const LACKS = Object.freeze({
  skill_run_script: 'openskills 1.5.0 runs no script: its commands are list, install, read, update, sync, manage and '
    + 'remove (dist/cli.js:1004-1010); a skill\'s scripts are left to the agent\'s own shell.',
  'nested-scan': 'openskills scans only the direct children of each search directory: findAllSkills() reads '
    + 'readdirSync(dir) and takes <dir>/<child>/SKILL.md (dist/cli.js:58-66); nothing deeper is examined.',
  'argument-keys': 'openskills\' command for the model takes positional skill names on a command line '
    + '(`read <skill-names...>`, dist/cli.js:1006, readSkill() at 568-603): it never sees an argument object or its '
    + 'keys, only the skill name the adapter passes (README.md, "Declarations").',
  validate: 'openskills 1.5.0 has no validator: its commands are list, install, read, update, sync, manage and '
    + 'remove (dist/cli.js:1004-1010), none of which judges a skill directory or reports the properties it read. Its one '
    + 'check, hasValidFrontmatter() (dist/cli.js:34-36: the trimmed text starts with "---"), guards only `install` '
    + '(dist/cli.js:314, 343, 369, 409) before it copies a skill into a skills directory.',
});

/**
 * Dialect `agentskills`: the absolute path of a skill's SKILL.md as openskills shows it, from the
 * `Base directory:` line `openskills read` prints (readSkill(), dist/cli.js:597: findSkill()'s
 * join(dir, name), dist/cli.js:84-90), with `SKILL.md` joined as findSkill() does. `links` maps
 * each search directory the adapter made a link of (`<project>/.agent/skills`,
 * `<home>/.agent/skills`) to the root it links to, as the case configured it: a base directory
 * below one of them is spelled below that root instead (undoing the adapter's own link, nothing
 * else); any other base directory is kept as openskills printed it.
 */
export function locationOf(baseDir, links) {
  let dir = baseDir;
  for (const [link, root] of links) {
    if (dir === link || dir.startsWith(`${link}/`)) {
      dir = root + dir.slice(link.length);
      break;
    }
  }
  return `${dir}/SKILL.md`;
}

export class CliError extends Error {
  constructor(message) { super(message); this.name = 'CliError'; }
}

/**
 * Runs `node dist/cli.js ...args` in `cwd` with `env` and waits for it to end, however long it
 * takes and however much it writes: the adapter adds no clock, cap or kill of its own (a scan that
 * blocks on a FIFO blocks the step, and the runner's bound reports it). Resolves
 * {code, signal, stdout, stderr}; rejects only when the command cannot be started.
 */
export function runCli(cli, args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = { stdout: [], stderr: [] };
    for (const stream of ['stdout', 'stderr']) child[stream].on('data', (chunk) => out[stream].push(chunk));
    child.on('error', (e) => reject(new CliError(`cannot start openskills: ${e.message}`)));
    child.on('close', (code, signal) => resolve({
      code, signal, stdout: Buffer.concat(out.stdout).toString('utf8'), stderr: Buffer.concat(out.stderr).toString('utf8'),
    }));
  });
}

export function tail(text) {
  const t = text.trim();
  return t.length > 2000 ? `...${t.slice(-2000)}` : (t || '(empty)');
}

/** The one skill block readSkill() prints (dist/cli.js:596-601), or null when `stdout` is not one. */
export function parseReadBlock(stdout) {
  const m = /^Reading: ([^\n]*)\nBase directory: ([^\n]*)\n\n/.exec(stdout);
  if (!m) return null;
  const trailer = `\n\nSkill read: ${m[1]}\n`;
  if (!stdout.endsWith(trailer) || stdout.length < m[0].length + trailer.length) return null;
  // With several names (openskills splits on ",") the inner blocks' framing stays in `content`.
  return { name: m[1], baseDir: m[2], content: stdout.slice(m[0].length, stdout.length - trailer.length) };
}

/**
 * The skills listed in an AGENTS.md written by generateSkillsXml() (dist/cli.js:689-724), in
 * its order. The XML is not escaped, so the listing is parsed strictly and must rebuild to the
 * exact text; anything else is a protocol error rather than a guess.
 */
export function parseListing(text) {
  const start = text.indexOf('<available_skills>\n\n');
  const end = text.lastIndexOf('\n\n</available_skills>');
  if (start < 0 || end < start) return [];
  const section = text.slice(start + '<available_skills>\n\n'.length, end);
  const block = /<skill>\n<name>([\s\S]*?)<\/name>\n<description>([^\n]*)<\/description>\n<location>(project|global)<\/location>\n<\/skill>/g;
  const skills = [];
  for (const m of section.matchAll(block)) skills.push({ name: m[1], description: m[2], location: m[3], raw: m[0] });
  if (skills.map((s) => s.raw).join('\n\n') !== section) {
    throw new CliError(`the AGENTS.md openskills wrote cannot be split into skills unambiguously (its XML is not escaped): ${tail(section)}`);
  }
  return skills;
}

