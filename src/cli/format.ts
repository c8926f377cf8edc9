/** Number and date formatting for human output: money and dates as the portal shows them (src/shared/format.ts). */
export { formatUsd as usd, formatWhen as when, formatDay as day } from '../shared/format.js';

const BARS = '▁▂▃▄▅▆▇█';

/** A one-line sparkline of non-negative numbers. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values.map((v) => (max === 0 ? BARS[0] : BARS[Math.min(BARS.length - 1, Math.round((v / max) * (BARS.length - 1)))])).join('');
}
