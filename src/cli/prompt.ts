/** Reading secrets: all of stdin when it is piped, a prompt without echo on a terminal. */
import { CliError } from './errors.js';

export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Prompt on stderr and read one line without echoing it (stdin must be a TTY). */
export function promptHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    stdin.setRawMode(true);
    stdin.resume();
    stdin.setEncoding('utf8');
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.off('data', onData);
      process.stderr.write('\n');
      if (err) reject(err);
      else resolve(value);
    };
    const onData = (s: string) => {
      for (const ch of s) {
        if (ch === '\r' || ch === '\n') return done();
        if (ch === '\u0003') return done(new CliError('cancelled', undefined, 'CANCELLED'));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** A secret from stdin (first line) or, on a terminal, from a hidden prompt. */
export async function readSecret(question: string): Promise<string> {
  if (process.stdin.isTTY) return (await promptHidden(question)).trim();
  return (await readStdin()).split(/\r?\n/)[0].trim();
}
