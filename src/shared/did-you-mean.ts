/**
 * "Did you mean …?" for names a person types: model ids, aliases, smart-route classes,
 * skill slugs. The distance is optimal string alignment (Levenshtein plus swapping two
 * neighbouring characters, the commonest typo), case-insensitive.
 */
export function editDistance(a: string, b: string): number {
  a = a.toLowerCase();
  b = b.toLowerCase();
  if (a === b) return 0;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => {
    const row = new Array<number>(cols).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j < cols; j++) d[0][j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[rows - 1][cols - 1];
}

/**
 * The candidates close enough to `input` to be what was meant: those at the smallest
 * distance found (at most `max`), if that is within a third of the input's length, at
 * least 1 and at most 3 edits. Empty when
 * nothing is close; inputs of more than 100 characters are not compared.
 */
export function didYouMean(input: string, candidates: Iterable<string>, max = 3): string[] {
  if (!input || input.length > 100) return [];
  const limit = Math.min(3, Math.max(1, Math.floor(input.length / 3)));
  const scored: { name: string; d: number }[] = [];
  const seen = new Set<string>();
  for (const name of candidates) {
    if (seen.has(name) || name === input) continue;
    seen.add(name);
    if (Math.abs(name.length - input.length) > limit) continue;
    const d = editDistance(input, name);
    if (d <= limit) scored.push({ name, d });
  }
  const best = Math.min(...scored.map((s) => s.d));
  return scored
    .filter((s) => s.d === best)
    .sort((x, y) => x.name.localeCompare(y.name))
    .slice(0, max)
    .map((s) => s.name);
}

/** ` Did you mean "a" or "b"?` (with a leading space), or '' when nothing is close. */
export function didYouMeanText(suggestions: string[]): string {
  if (suggestions.length === 0) return '';
  const quoted = suggestions.map((s) => `"${s}"`);
  const list = quoted.length === 1 ? quoted[0] : `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}`;
  return ` Did you mean ${list}?`;
}
