import { spawn } from 'node:child_process';
import { AGW_BIN } from '../helpers/cli.js';

/** Escape sequences and carriage returns: what a person does not see as characters. */
const CONTROL = /\x1b\[[0-9;?]*[A-Za-z]|\r/g;

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * Runs the built CLI on a pseudo-terminal `cols` columns wide (util-linux `script`), so it
 * prints what a person sees: colour included (stripped here), tables aligned and cut to
 * the width. Returns stdout+stderr as the terminal showed them, escape codes removed.
 */
export function runCliTty(args: string[], env: Record<string, string | undefined>, cols = 80): Promise<{ code: number | null; screen: string }> {
  const cmd = `stty cols ${cols} rows 60; exec ${quote(process.execPath)} ${quote(AGW_BIN)} ${args.map(quote).join(' ')}`;
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
      env: { ...process.env, AGW_API_KEY: undefined, AGW_BASE_URL: undefined, NO_COLOR: undefined, TERM: 'xterm-256color', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, screen: out.replace(CONTROL, '') });
    });
  });
}

/** The lines of a table printed on a terminal: its header line (found by its first cell) and the rows after it. */
export function tableAt(screen: string, firstHeader: string): { header: string; rows: string[] } {
  const lines = screen.split('\n');
  const i = lines.findIndex((l) => l.startsWith(firstHeader) || l.trimStart().startsWith(firstHeader));
  if (i < 0) throw new Error(`no table starting with ${firstHeader} in:\n${screen}`);
  const rows: string[] = [];
  for (const l of lines.slice(i + 1)) {
    if (!l.trim()) break;
    rows.push(l);
  }
  return { header: lines[i], rows };
}
