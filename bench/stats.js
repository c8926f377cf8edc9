// Small statistics helpers shared by the benchmark phases.

/** Percentile (0..100) of an array of numbers, nearest-rank on a sorted copy. */
export function percentile(values, p) {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Median of a list (the mean of the middle two for an even count); nulls are skipped. */
export function median(values) {
  const v = values.filter((x) => typeof x === 'number' && Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

/** Rounds to `digits` decimals, keeping null as null. */
export function round(x, digits = 3) {
  if (x === null || x === undefined || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Milliseconds elapsed since a process.hrtime.bigint() stamp. */
export function msSince(t0) {
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
