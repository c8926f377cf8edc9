import { describe, expect, test } from 'vitest';
import { scanFile } from '../../src/shared/scan/index.js';
import { encodedRuns } from '../../src/shared/scan/runs.js';

/**
 * Review finding M4, the matching: ENCODED_BLOB's runs are counted in one pass (runs.ts)
 * and find exactly what its regular expressions found, and the 5 MiB files that took 3 to
 * 5 s of one core each (a regex tried from every start of a 255-character run) scan in a
 * fraction of that.
 */
const OLD = [/[A-Za-z0-9+/_-]{256,}={0,2}/g, /(?:\\x[0-9a-fA-F]{2}){32,}|(?:\\u[0-9a-fA-F]{4}){32,}/g, /(?:%[0-9a-fA-F]{2}){48,}/g];
const LIMITS = { base64: 256, escapes: 32, percent: 48 };
const byRegex = (text: string) => OLD.flatMap((re) => [...text.matchAll(re)].map((m) => ({ index: m.index, text: m[0] })));

/** A deterministic mix of the pieces the three kinds are made of, in runs around their thresholds. */
function mixed(seed: number, length: number): string {
  let s = seed;
  const rand = (n: number) => ((s = (s * 1103515245 + 12345) % 2 ** 31), s % n);
  const pieces = ['A', 'z', '9', '+', '/', '_', '-', '=', '==', ' ', '\n', '\\x4f', '\\x4', '\\u00e9', '\\u00g9', '%2F', '%2', '\\', '%', 'é', '\\\\x41'];
  let out = '';
  while (out.length < length) {
    const p = pieces[rand(pieces.length)];
    // letters in runs up to 300 long (around the 256 threshold), the rest up to 90 times
    out += p.repeat(rand(4) === 0 ? 1 : rand(p.length === 1 && /\w/.test(p) ? 300 : 90) + 1);
  }
  return out;
}

describe('encoded runs, counted', () => {
  test.each([
    ['a 256-character run with "=="', `x ${'A'.repeat(256)}== y`],
    ['a 255-character run (none)', `x ${'A'.repeat(255)} y`],
    ['two runs on a line and one short', `${'b'.repeat(300)} ${'c'.repeat(10)} ${'d/'.repeat(200)}=`],
    ['32 \\x escapes, 31, 32 \\u escapes', `${'\\x41'.repeat(32)} ${'\\x41'.repeat(31)} ${'\\u0041'.repeat(32)}`],
    ['a broken escape in a chain', `${'\\x41'.repeat(20)}\\x4${'\\x41'.repeat(32)}`],
    ['48 percent escapes after a lone %', `%%${'%2f'.repeat(48)}%2`],
    ['an escape right after a run', `${'A'.repeat(260)}${'\\x41'.repeat(40)}`],
  ])('%s: as the regular expressions found them', (_what, text) => {
    expect(encodedRuns(text, LIMITS, 100_000).runs).toEqual(byRegex(text));
  });

  test('on 200 generated texts around the thresholds: as the regular expressions found them', () => {
    const kinds = new Set<string>();
    for (let seed = 1; seed <= 200; seed++) {
      const text = mixed(seed, 4000);
      const runs = encodedRuns(text, LIMITS, 100_000).runs;
      expect(runs, `seed ${seed}`).toEqual(byRegex(text));
      for (const r of runs) kinds.add(r.text.startsWith('\\x') ? 'x' : r.text.startsWith('\\u') ? 'u' : r.text.startsWith('%') ? '%' : 'base64');
    }
    expect(kinds).toEqual(new Set(['base64', 'x', 'u', '%'])); // the texts did reach every threshold
  });

  test('at most `max` of each kind, then truncated', () => {
    const text = `${'A'.repeat(300)} `.repeat(5);
    expect(encodedRuns(text, LIMITS, 3)).toMatchObject({ runs: { length: 3 }, truncated: true });
    expect(encodedRuns(text, LIMITS, 5)).toMatchObject({ runs: { length: 5 }, truncated: false });
  });
});

const FIVE_MIB = 5 * 1024 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(FIVE_MIB / unit.length)).slice(0, FIVE_MIB);

describe('5 MiB hostile files scan in linear time', () => {
  test.each([
    ['255-character base64 runs (once 5.2 s)', fill(`${'QUJD'.repeat(64).slice(0, 255)} `)],
    ['"wget" and 195-character gaps (once 3.1 s)', fill(`wget ${'a'.repeat(195)}\n`)],
    ['base64 -d and 190-character gaps (once 4.2 s)', fill(`base64 -d ${'c'.repeat(190)} `)],
  ])('%s: well under 2 s', (_what, text) => {
    const t0 = performance.now();
    scanFile('x.sh', Buffer.from(text));
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
