/** The first value of a page's query parameter, given once or repeated ('' when absent). */
export function firstValue(v: unknown): string {
  const x = Array.isArray(v) ? v[0] : v;
  return typeof x === 'string' ? x : '';
}
