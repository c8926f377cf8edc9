/**
 * How people see money and dates, the same in the CLI and the web portal: the portal's
 * script embeds these functions' source (`String(formatUsd)`), so they are written in
 * plain ES2017 with no inner functions, closures or imports.
 *
 * Money: USD with thousands separators; 2 decimals from $1 up (and for zero); below $1,
 * 4 significant digits (trailing zeros dropped, at least 2 and at most 6 decimals):
 * $1,234.50, $0.50, $0.016, $0.002668; a non-zero amount below $0.000001 is
 * "<$0.000001". Dates: ISO in UTC, a moment as "2026-01-31 23:59 UTC", a day as
 * "2026-02-01".
 */
export function formatUsd(n: number | null | undefined): string {
  if (typeof n !== 'number' || !isFinite(n)) return '';
  var sign = n < 0 ? '-' : '';
  var a = Math.abs(n);
  var s: string;
  if (a === 0 || a >= 1) {
    s = a.toFixed(2);
  } else if (a < 0.000001) {
    return sign + '<$0.000001';
  } else {
    var d = Math.min(6, Math.max(2, 3 - Math.floor(Math.log10(a))));
    s = a.toFixed(d).replace(/0+$/, '');
    if (s.length - s.indexOf('.') - 1 < 2) s = a.toFixed(2);
  }
  var dot = s.indexOf('.');
  return sign + '$' + s.slice(0, dot).replace(/\B(?=(\d{3})+(?!\d))/g, ',') + s.slice(dot);
}

/** An ISO date-time (or epoch ms) as "YYYY-MM-DD HH:MM UTC"; '' for none. */
export function formatWhen(t: string | number | null | undefined): string {
  if (t === null || t === undefined || t === '') return '';
  var ms = typeof t === 'number' ? t : Date.parse(t);
  if (!isFinite(ms)) return String(t);
  return new Date(ms).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

/** An ISO date-time (or epoch ms) as its UTC day, "YYYY-MM-DD"; '' for none. */
export function formatDay(t: string | number | null | undefined): string {
  if (t === null || t === undefined || t === '') return '';
  var ms = typeof t === 'number' ? t : Date.parse(t);
  if (!isFinite(ms)) return String(t);
  return new Date(ms).toISOString().slice(0, 10);
}
