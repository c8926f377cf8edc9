import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgwError } from '../../src/shared/errors.js';
import { finalize, release, reserve, type Reservation, type ReserveInput, type Caller } from '../../src/daemon/money/calls.js';
import type { KeyLimits } from '../../src/daemon/money/key-limits.js';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';

/**
 * A key's budget and rates are enforced by the money engine's admission, on both stores
 * (CONTRACT "Keys with limits", issue #17): the budget through holds, as the wallet
 * (a burst can never take a key past it), the rates as token buckets. These tests drive
 * the engine directly (reserve / finalize, as the gateway routes do); the HTTP side is in
 * the key tests.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const HOLD = 1_000_000; // 0.001 USD
const quote = (nano = HOLD, tokens = 100) => ({ nano, tokens, promptNano: 0, outputNanoPerToken: 1000, outputCap: 100 });
const cost = (nano: number) => ({ model: 'gpt-4o-mini', promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0, units: 0, rawNano: nano / 2, customerNano: nano });
const limits = (l: Partial<KeyLimits>): KeyLimits => ({ budgetNano: null, budgetPeriod: 'day', rpm: null, tpm: null, models: null, ...l });

async function user() {
  return f.d.user({ tier: 'free', balance: 10, quotas: { ai_chat: -1 } });
}

function input(u: { id: string; keyId: string }, keyLimits: KeyLimits | null, q = quote()): [Caller, ReserveInput] {
  const caller: Caller = { userId: u.id, tier: 'free', keyId: u.keyId, keyLimits, keyAncestors: undefined, storeVersion: undefined };
  return [caller, { usageType: 'ai_chat', endpoint: 'chat', providerId: 'openai', model: 'gpt-4o-mini', alias: null, projectId: null, quote: q }];
}

async function attempt(i: [Caller, ReserveInput]): Promise<Reservation | AgwError> {
  try {
    return await reserve(f.d.daemon.ctx, ...i);
  } catch (e) {
    if (e instanceof AgwError) return e;
    throw e;
  }
}

describe('a key budget', () => {
  it('a burst can never take a key past its budget: holds count, 402 KEY_BUDGET_EXCEEDED says budget, spent and reset', async () => {
    const u = await user();
    const l = limits({ budgetNano: 3 * HOLD, budgetPeriod: 'day' });
    const tries = await Promise.all(Array.from({ length: 8 }, () => attempt(input(u, l))));
    const admitted = tries.filter((t): t is Reservation => !(t instanceof AgwError));
    const refused = tries.filter((t): t is AgwError => t instanceof AgwError);
    expect(admitted).toHaveLength(3);
    expect(refused).toHaveLength(5);
    for (const e of refused) {
      expect(e.code).toBe('KEY_BUDGET_EXCEEDED');
      expect(e.status).toBe(402);
      expect(e.details).toMatchObject({ budget: 0.003, budgetPeriod: 'day', spent: 0, held: 0.003, remaining: 0, required: 0.001 });
      expect(typeof e.details!.resetsAt).toBe('string');
      expect(e.headers?.['x-request-id']).toMatch(/^use_/);
    }
    // settling charges the actual cost: what the holds did not use is the key's again
    for (const r of admitted) await finalize(f.d.daemon.ctx, r, 'openai', cost(HOLD / 2), 200);
    const spent = await f.db.get<{ s: number }>('SELECT spent_nusd AS s FROM key_spend WHERE key_id = ?', [u.keyId]);
    expect(Number(spent!.s)).toBe((3 * HOLD) / 2);
    const more = await Promise.all(Array.from({ length: 3 }, () => attempt(input(u, l))));
    expect(more.filter((t) => !(t instanceof AgwError))).toHaveLength(1); // 1.5 holds left: one fits
    for (const r of more) if (!(r instanceof AgwError)) await release(f.d.daemon.ctx, r, 503);
  });

  it('a key without limits costs nothing extra: no key spend is kept', async () => {
    const u = await user();
    const r = await reserve(f.d.daemon.ctx, ...input(u, null));
    await finalize(f.d.daemon.ctx, r, 'openai', cost(HOLD / 2), 200);
    expect(await f.db.all('SELECT * FROM key_spend WHERE key_id = ?', [u.keyId])).toEqual([]);
  });
});

describe('a key rate', () => {
  it('rpm 5: exactly 5 of 12 sequential calls pass; the 6th is 429 RATE_LIMITED with Retry-After and the x-ratelimit headers', async () => {
    const u = await user();
    const l = limits({ rpm: 5 });
    const outcomes: (number | string)[] = [];
    let sixth: AgwError | undefined;
    for (let i = 0; i < 12; i++) {
      const t = await attempt(input(u, l));
      if (t instanceof AgwError) {
        outcomes.push(t.code);
        sixth ??= t;
      } else {
        outcomes.push(200);
        expect(t.rate?.requests).toMatchObject({ limit: 5, remaining: 4 - i });
        await finalize(f.d.daemon.ctx, t, 'openai', cost(1000), 200);
      }
    }
    expect(outcomes.filter((o) => o === 200)).toHaveLength(5);
    expect(outcomes.slice(0, 5)).toEqual([200, 200, 200, 200, 200]);
    expect(sixth!.status).toBe(429);
    expect(sixth!.code).toBe('RATE_LIMITED');
    const ra = Number(sixth!.headers!['retry-after']);
    expect(ra).toBeGreaterThanOrEqual(1);
    expect(ra).toBeLessThanOrEqual(12);
    expect(sixth!.headers).toMatchObject({ 'x-ratelimit-limit-requests': '5', 'x-ratelimit-remaining-requests': '0' });
    expect(sixth!.headers!['x-ratelimit-reset-requests']).toMatch(/^\d+(\.\d+)?m?s$|^\d+m\d+s$/);
  });

  it('rpm 10 with 30 parallel calls: exactly 10 pass', async () => {
    const u = await user();
    const l = limits({ rpm: 10 });
    const tries = await Promise.all(Array.from({ length: 30 }, () => attempt(input(u, l))));
    expect(tries.filter((t) => !(t instanceof AgwError))).toHaveLength(10);
    expect(tries.filter((t) => t instanceof AgwError && t.code === 'RATE_LIMITED')).toHaveLength(20);
    for (const t of tries) if (!(t instanceof AgwError)) await finalize(f.d.daemon.ctx, t, 'openai', cost(1000), 200);
  });

  it('tpm counts the hold at admission and is corrected at settlement', async () => {
    const u = await user();
    const l = limits({ tpm: 1000 });
    const a = await attempt(input(u, l, quote(HOLD, 600)));
    expect(a).not.toBeInstanceOf(AgwError);
    const b = await attempt(input(u, l, quote(HOLD, 600)));
    expect(b).toBeInstanceOf(AgwError); // 600 + 600 > 1000 while the first holds its tokens
    expect((b as AgwError).details).toMatchObject({ which: 'tokens', limit: 1000 });
    expect((b as AgwError).headers).toMatchObject({ 'x-ratelimit-limit-tokens': '1000' });
    // the first used 15 tokens: the other 585 come back
    await finalize(f.d.daemon.ctx, a as Reservation, 'openai', cost(1000), 200);
    const c = await attempt(input(u, l, quote(HOLD, 600)));
    expect(c).not.toBeInstanceOf(AgwError);
    await release(f.d.daemon.ctx, c as Reservation, 503);
  });
});
