/** Output helpers: exactly one JSON document with --json; aligned tables only on a TTY. */
export const isTty = (): boolean => Boolean(process.stdout.isTTY);
export const useColor = (): boolean => isTty() && !process.env.NO_COLOR && process.env.TERM !== 'dumb';

export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

const paint = (code: number) => (s: string) => (useColor() ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = paint(1);
export const dim = paint(2);
export const green = paint(32);
export const red = paint(31);
export const yellow = paint(33);

/** A table: aligned columns; without a TTY, tab-separated lines with a header (easy to cut/awk). */
export function printTable(headers: string[], rows: (string | number | boolean | null | undefined)[][]): void {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? '' : String(c))));
  if (!isTty()) {
    process.stdout.write([headers, ...cells].map((r) => r.join('\t')).join('\n') + '\n');
    return;
  }
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd();
  process.stdout.write([bold(line(headers)), ...cells.map(line)].join('\n') + '\n');
}

export function printKv(pairs: [string, string | number | boolean | null | undefined][]): void {
  const w = Math.max(...pairs.map(([k]) => k.length));
  for (const [k, v] of pairs) process.stdout.write(`${isTty() ? bold(k.padEnd(w)) : k.padEnd(w)}  ${v ?? ''}\n`);
}
