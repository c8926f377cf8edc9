/** Number and date formatting for human output. */

/** USD with 2 to 6 decimals: $12.50, $0.000125. */
export function usd(n: number | null | undefined): string {
  if (typeof n !== 'number' || !Number.isFinite(n)) return '';
  const sign = n < 0 ? '-' : '';
  const a = Math.abs(n);
  let s = a.toFixed(6).replace(/0+$/, '');
  const decimals = s.length - s.indexOf('.') - 1;
  if (decimals < 2) s = a.toFixed(2);
  return `${sign}$${s}`;
}

/** ISO date-time to "YYYY-MM-DD HH:MM" (UTC). */
export function when(iso: string | null | undefined): string {
  if (!iso) return '';
  return iso.replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, 'Z');
}

const BARS = '▁▂▃▄▅▆▇█';

/** A one-line sparkline of non-negative numbers. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values.map((v) => (max === 0 ? BARS[0] : BARS[Math.min(BARS.length - 1, Math.round((v / max) * (BARS.length - 1)))])).join('');
}
