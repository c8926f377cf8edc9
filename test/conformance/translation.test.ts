import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { CALLERS, TARGETS, featuresOf } from './cases.js';
import { judge, startHarness, type Outcome } from './harness.js';
import { RESULTS_FILE } from './table.js';

/**
 * Translation conformance (#28 item 5): every feature × target provider × caller base URL,
 * replayed through a real agw against loopback mocks serving each provider's fixtures
 * (cases.ts, harness.ts, README.md). A case whose route is missing (404) or whose target
 * unified chat cannot reach yet is skipped with the reason in its name; the capability
 * probes run before the cases are declared, so they turn on by themselves when the code
 * lands. The outcomes go to results.json, which renders the table in docs/gateway.md
 * (`npm run conformance:table`; table.test.ts checks the two agree).
 */
const h = await startHarness();
afterAll(() => h.close());

/**
 * Cases that run and fail for a known bug still open: each runs as `test.fails` (so the fix
 * shows up as a failure and its id comes off this list); `CONFORMANCE_PENDING=run` runs them
 * as plain tests to show why each fails. Empty since the translate branch (#28) and its
 * follow-up: the 17 cases that were here (unified chat → anthropic dropping tools and the
 * rest without a word, `content: null` and image parts refused) all pass.
 */
const PENDING: string[] = []; // `caller/feature/target` ids, each with the issue that fixes it
const PENDING_TRANSLATE = new Set<string>(process.env.CONFORMANCE_PENDING === 'run' ? [] : PENDING);

const results: Record<string, Outcome> = {};
let declared = 0;

for (const c of CALLERS) {
  describe(`${c.id}: POST /api${c.path}`, () => {
    for (const f of featuresOf(c)) {
      describe(f.id, () => {
        for (const t of TARGETS) {
          const id = `${c.id}/${f.id}/${t.id}`;
          declared++;
          const why = !h.callers[c.id] ? `/api${c.path} answers 404 until the translate branch lands` : !h.targets[t.id] ? `${t.id} is not a unified-chat target yet (#28 item 2)` : '';
          if (why) results[id] = 'pending';
          const run = PENDING_TRANSLATE.has(id) && !why ? test.fails : test.skipIf(why !== '');
          run(`${t.id}${why ? ` (skipped: ${why})` : ''}`, async () => {
            const j = await judge(h, c, f, t);
            results[id] = j.outcome;
            const acceptable: Outcome[] = f.mustCarry(t.id) ? ['carried'] : ['carried', 'dropped', 'refused'];
            expect(acceptable, `${id}: ${j.outcome}${j.problems.length ? `: ${j.problems.join('; ')}` : ''}`).toContain(j.outcome);
          });
        }
      });
    }
  });
}

test('results.json is what this run found (regenerate: npm run conformance:table)', () => {
  if (Object.keys(results).length !== declared) return; // a filtered run (-t): nothing to compare
  const sorted = Object.fromEntries(Object.entries(results).sort(([a], [b]) => a.localeCompare(b)));
  const doc = { note: 'written by test/conformance/translation.test.ts; rendered into docs/gateway.md by npm run conformance:table', cases: sorted };
  const file = join(RESULTS_FILE);
  if (process.env.CONFORMANCE_UPDATE === '1') {
    writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
    return;
  }
  expect(existsSync(file), `${file} (npm run conformance:table writes it)`).toBe(true);
  expect(sorted).toEqual((JSON.parse(readFileSync(file, 'utf8')) as typeof doc).cases);
});
