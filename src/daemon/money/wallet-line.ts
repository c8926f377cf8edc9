import { usdText } from './hold.js';
import type { Cost } from './pricing.js';
import type { Reservation } from './calls.js';

/**
 * What a gateway call's wallet transaction says: the endpoint, the provider and model, and
 * the token classes it was charged for, with the cap at its hold when the provider
 * reported more than the hold covered. Kept apart from calls.ts (the call's life) so the
 * wording is found, and tested, in one place (test/unit/token-classes.test.ts).
 */

/** 1234567 → "1,234,567" (Intl's toLocaleString costs more than a call's other bookkeeping) */
export function grouped(n: number): string {
  const s = String(n);
  if (s.length <= 3 || !Number.isInteger(n) || n < 0) return s;
  let out = s.slice(0, s.length % 3 || 3);
  for (let i = out.length; i < s.length; i += 3) out += `,${s.slice(i, i + 3)}`;
  return out;
}

/**
 * What a token-priced call was charged for, class by class (those it used), as the wallet
 * transaction names it: ": 100 input tokens, 5,000 cached input tokens, 1,000 cache-write
 * tokens (1 h), 50 output tokens", and the tier when it was one; "" for unit-priced calls.
 */
export function tokenClasses(c: Cost): string {
  if (c.units > 0 || c.promptTokens + c.completionTokens === 0) return '';
  const input = c.promptTokens - c.cachedTokens - c.cacheWriteTokens;
  const write5m = c.cacheWriteTokens - c.cacheWrite1hTokens;
  let s = '';
  const add = (n: number, what: string) => {
    if (n > 0) s += `${s ? ', ' : ': '}${grouped(n)} ${what}`;
  };
  add(input, 'input tokens');
  add(c.cachedTokens, 'cached input tokens');
  add(write5m, 'cache-write tokens (5 min)');
  add(c.cacheWrite1hTokens, 'cache-write tokens (1 h)');
  add(c.completionTokens, c.reasoningTokens > 0 ? `output tokens (${grouped(c.reasoningTokens)} reasoning)` : 'output tokens');
  return c.tierAbove > 0 && s ? `${s} at the price above ${grouped(c.tierAbove)} prompt tokens` : s;
}

/** The wallet transaction's description of a settled call. */
export function describe(r: Pick<Reservation, 'endpoint' | 'holdNano'>, providerId: string, cost: Cost, writtenOff: number): string {
  const what = `${r.endpoint} ${providerId}${cost.model ? `/${cost.model}` : ''}${tokenClasses(cost)}`;
  return writtenOff > 0 ? `${what} (capped at its hold ${usdText(r.holdNano)}: ${usdText(writtenOff)} written off)` : what;
}
