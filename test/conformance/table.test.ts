import { readFileSync, writeFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { DOCS_FILE, RESULTS_FILE, renderTables, withTables } from './table.js';

/**
 * docs/gateway.md's conformance table is generated from results.json (which the
 * translation suite checks against its own run), so the published table cannot drift.
 * `npm run conformance:table` rewrites both.
 */
test('docs/gateway.md carries the table rendered from results.json', () => {
  const { cases } = JSON.parse(readFileSync(RESULTS_FILE, 'utf8')) as { cases: Record<string, never> };
  const docs = readFileSync(DOCS_FILE, 'utf8');
  const want = withTables(docs, renderTables(cases));
  if (process.env.CONFORMANCE_UPDATE === '1') writeFileSync(DOCS_FILE, want);
  else expect(docs).toBe(want);
});
