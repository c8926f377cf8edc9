/** Output helpers: exactly one JSON document with --json; aligned tables only on a TTY. */
import { stripVTControlCharacters } from 'node:util';
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

/** Width on the terminal: escape codes (colour) take none. */
const visibleWidth = (s: string): number => stripVTControlCharacters(s).length;

/** A number, an amount or a count as the CLI prints them: $1,234.50, -$0.016, <$0.000001, 2x, 1,234. */
const NUMERIC = /^[-+]?<?\$?\d[\d,]*(\.\d+)?[x%]?$/;

/** `s` cut to `width` columns with an ellipsis (its colour dropped when cut). */
function clip(s: string, width: number): string {
  if (visibleWidth(s) <= width) return s;
  const plain = stripVTControlCharacters(s);
  return width <= 1 ? plain.slice(0, width) : `${plain.slice(0, width - 1)}…`;
}

export interface TableOptions {
  /** the column cut to fit the terminal's width (default: the last one) */
  shrink?: number;
}

/**
 * A table. On a TTY: columns aligned by their visible width (colour codes do not count),
 * numbers and amounts right-aligned, and rows that would wrap cut to the terminal's width
 * in the `shrink` column with an ellipsis. Without a TTY: tab-separated lines with a
 * header, every value whole (easy to cut/awk).
 */
export function printTable(headers: string[], rows: (string | number | boolean | null | undefined)[][], opts: TableOptions = {}): void {
  const cells = rows.map((r) => headers.map((_, i) => (r[i] === null || r[i] === undefined ? '' : String(r[i]))));
  if (!isTty()) {
    process.stdout.write([headers, ...cells].map((r) => r.join('\t')).join('\n') + '\n');
    return;
  }
  const right = headers.map((_, i) => {
    const values = cells.map((r) => stripVTControlCharacters(r[i])).filter((v) => v !== '' && v !== '-');
    return values.length > 0 && values.every((v) => NUMERIC.test(v));
  });
  const widths = headers.map((h, i) => Math.max(visibleWidth(h), ...cells.map((r) => visibleWidth(r[i]))));
  const shrink = opts.shrink ?? headers.length - 1;
  const columns = process.stdout.columns;
  if (columns) {
    const total = widths.reduce((a, w) => a + w, 0) + 2 * (headers.length - 1);
    if (total > columns) widths[shrink] = Math.max(visibleWidth(headers[shrink]), 8, widths[shrink] - (total - columns));
  }
  const pad = (c: string, i: number) => {
    const cut = clip(c, widths[i]);
    const fill = ' '.repeat(widths[i] - visibleWidth(cut));
    return right[i] ? fill + cut : cut + fill;
  };
  const line = (r: string[]) => r.map(pad).join('  ').trimEnd();
  process.stdout.write([bold(line(headers)), ...cells.map(line)].join('\n') + '\n');
}

export function printKv(pairs: [string, string | number | boolean | null | undefined][]): void {
  const w = Math.max(...pairs.map(([k]) => visibleWidth(k)));
  for (const [k, v] of pairs) process.stdout.write(`${isTty() ? bold(k.padEnd(w)) : k.padEnd(w)}  ${v ?? ''}\n`);
}
