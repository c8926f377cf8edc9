import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const AGW_BIN = fileURLToPath(new URL('../../bin/agw.js', import.meta.url));

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI (built dist) as a subprocess. */
export function runCli(
  args: string[],
  opts: { env?: Record<string, string | undefined>; input?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGW_BIN, ...args], {
      cwd: opts.cwd,
      env: { ...process.env, NO_COLOR: '1', AGW_API_KEY: undefined, AGW_BASE_URL: undefined, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** Starts `agw serve` as a subprocess and resolves once it printed its listening line. */
export function spawnServe(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ url: string; stdout: () => string; stderr: () => string; kill(signal?: NodeJS.Signals): Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [AGW_BIN, 'serve', '--port', '0', ...args], {
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    const exited = new Promise<number | null>((r) => child.on('close', (c) => r(c)));
    child.stdout.on('data', (d) => {
      out += d;
      const m = /agw listening on (http:\/\/\S+)/.exec(out) ?? /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) resolve({ url: m[1], stdout: () => out, stderr: () => err, kill: (s = 'SIGTERM') => (child.kill(s), exited) });
    });
    child.stderr.on('data', (d) => (err += d));
    exited.then((code) => reject(new Error(`agw serve exited with ${code}: ${err}`)));
  });
}

/**
 * Runs the real CLI on a pseudo-terminal (util-linux `script`), as a person's shell would,
 * typing `answer` at its first [y/N] question; the terminal's whole output (stdout and
 * stderr, as a person sees them). Killed after 20 s.
 */
export function runOnTerminal(
  args: string[],
  answer: string,
  opts: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const cmd = [process.execPath, AGW_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: opts.cwd, env: { ...process.env, NO_COLOR: '1', ...opts.env } });
    let out = '';
    let answered = false;
    child.stdout.on('data', (c) => {
      out += c;
      if (!answered && out.includes('[y/N]')) {
        answered = true;
        child.stdin.write(`${answer}\r`);
      }
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}
