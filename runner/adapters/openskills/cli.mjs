// The command line of openskills 1.5.0 as the adapter uses it: running `node dist/cli.js ...`
// bounded in time and output, and reading back what `read` prints and what `sync` writes.
// Pure of any protocol (adapter.mjs does that); its tests are cli.test.mjs.
import { spawn } from 'node:child_process';

export class CliError extends Error {
  constructor(message, hung = false) { super(message); this.name = 'CliError'; this.hung = hung; }
}

// One CLI run may take this long; a scan that blocks (a FIFO named SKILL.md) is killed then (so
// nothing outlives the case) and the adapter leaves the step unanswered: the runner's step
// timeout (15 s, in ./run) then shows the hang as openskills' own, never as an answer the adapter
// made up. An ordinary command takes well under a second.
export const CLI_TIMEOUT_MS = 10_000;
// Bytes of stdout and stderr together kept per CLI run; more is a protocol error (a read result
// is at most 16 MiB on the wire anyway).
export const CLI_OUTPUT_CAP = 16 * 1024 * 1024;

/** Runs `node dist/cli.js ...args` in `cwd` with `env`; resolves {code, signal, stdout, stderr}. */
export function runCli(cli, args, cwd, env, { timeoutMs = CLI_TIMEOUT_MS, cap = CLI_OUTPUT_CAP } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = { stdout: [], stderr: [], bytes: 0 };
    let failure = null;
    let hung = false;
    const stop = (why, timedOut = false) => {
      failure ??= why;
      hung ||= timedOut;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    };
    const timer = setTimeout(() => stop(`did not finish within ${timeoutMs / 1000} s (killed)`, true), timeoutMs);
    for (const stream of ['stdout', 'stderr']) {
      child[stream].on('data', (chunk) => {
        out.bytes += chunk.length;
        if (out.bytes > cap) return stop(`wrote more than ${cap} bytes (killed)`);
        out[stream].push(chunk);
      });
    }
    child.on('error', (e) => { clearTimeout(timer); reject(new CliError(`cannot start openskills: ${e.message}`)); });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const stdout = Buffer.concat(out.stdout).toString('utf8');
      const stderr = Buffer.concat(out.stderr).toString('utf8');
      if (failure) {
        reject(new CliError(`\`openskills ${args.join(' ')}\` ${failure}; stderr: ${tail(stderr)}`, hung));
      } else {
        resolve({ code, signal, stdout, stderr });
      }
    });
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

