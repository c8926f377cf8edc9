import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { finalize, release, reserve } from '../../src/daemon/money/calls.js';
import { quotaUsed, startGatewayFixture, usageRecords, usageTransactions, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { usePostgres } from '../helpers/pg.js';

let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture({ yaml: 'gateway: { responseTimeoutMs: 400 }\n' });
});
afterAll(async () => {
  await f?.close();
});

const messages = [{ role: 'user', content: 'Hello there' }];
/** a hold of 9000 nano-USD, as a small token-priced call would take */
const HOLD = { nano: 9000, tokens: 100, promptNano: 1000, outputNanoPerToken: 80, outputCap: 100 };
const chat = (key: string, model = 'gpt-4o-mini', extra: Record<string, unknown> = {}) =>
  f.d.fetch('/gateway/chat', { method: 'POST', key, json: { model, messages, ...extra } });

describe('ai_chat quota reservation', () => {
  it('with a quota of 5 and 20 parallel calls exactly 5 go through and 15 get 429 QUOTA_EXCEEDED', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: 5 } });
    const responses = await Promise.all(Array.from({ length: 20 }, () => chat(u.key)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    for (const r of responses.filter((x) => x.status === 429)) {
      const body = await r.json();
      expect(body.code).toBe('QUOTA_EXCEEDED');
      expect(body.error).toMatch(/upgrade to the Pro tier/i);
    }
    await Promise.all(responses.filter((x) => x.status === 200).map((r) => r.arrayBuffer()));
    expect(await quotaUsed(f.db, u.id)).toBe(5);
    const recs = await usageRecords(f.db, u.id);
    expect(recs.map((r) => r.status)).toEqual(['finalized', 'finalized', 'finalized', 'finalized', 'finalized']);
    expect(await usageTransactions(f.db, u.id)).toHaveLength(5);
    // the refusal holds for the next call too
    expect((await chat(u.key)).status).toBe(429);
  });

  it('a quota of 0 refuses at once; -1 is no cap', async () => {
    const none = await f.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: 0 } });
    expect((await chat(none.key)).status).toBe(429);
    const unlimited = await f.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: -1 } });
    expect((await chat(unlimited.key)).status).toBe(200);
    expect(await quotaUsed(f.db, unlimited.id)).toBe(1);
  });
});

describe('refund on upstream failure (reservation released, nothing charged)', () => {
  const modes: [string, 'error' | 'rate_limit' | 'down' | 'slow' | 'hang', number, string, number | null][] = [
    ['500 from the upstream', 'error', 503, 'UPSTREAM_UNREACHABLE', 500],
    ['429 from the upstream', 'rate_limit', 429, 'UPSTREAM_RATE_LIMITED', 429],
    ['upstream down (connection reset)', 'down', 503, 'UPSTREAM_UNREACHABLE', null],
    ['upstream slower than the response timeout', 'slow', 503, 'UPSTREAM_UNREACHABLE', null],
    ['upstream that never answers', 'hang', 503, 'UPSTREAM_UNREACHABLE', null],
  ];
  for (const [name, mode, status, code, httpStatus] of modes) {
    for (const provider of ['openai', 'anthropic'] as const) {
      it(`${provider}: ${name} → ${status} ${code}`, async () => {
        const u = await f.d.user({ tier: 'pro', balance: 1 });
        const sim = f[provider];
        sim.setMode(mode, { delayMs: 2000 });
        const t0 = Date.now();
        try {
          const res = await chat(u.key, provider === 'openai' ? 'gpt-4o-mini' : 'claude-haiku-4-5');
          expect(res.status).toBe(status);
          const body = await res.json();
          expect(body.code).toBe(code);
          if (mode === 'rate_limit') expect(res.headers.get('retry-after')).toBe('1');
        } finally {
          sim.setMode('ok');
        }
        expect(Date.now() - t0).toBeLessThan(1900); // the 400 ms response timeout, not the sim's delay
        const recs = await usageRecords(f.db, u.id);
        expect(recs).toHaveLength(1);
        expect(recs[0]).toMatchObject({ status: 'failed', customer: 0, raw: 0, httpStatus });
        expect(await quotaUsed(f.db, u.id)).toBe(0);
        expect(await usageTransactions(f.db, u.id)).toEqual([]);
        expect(await walletRow(f.db, u.id)).toEqual({ balance: 1_000_000_000, allowanceUsed: 0 });
        // and the next call works again
        expect((await chat(u.key)).status).toBe(200);
      });
    }
  }
});

describe('metrics', () => {
  it('counts upstream calls by provider and outcome', async () => {
    const text = await (await f.d.fetch('/metrics')).text();
    for (const outcome of ['ok', 'http_5xx', 'rate_limited', 'connect_error', 'timeout']) {
      expect(text).toMatch(new RegExp(`agw_upstream_calls_total\\{provider="openai",outcome="${outcome}"\\} [1-9]`));
    }
  });
});

// The SQLite daemon holds a call's unit and money in memory and books the call whole
// through its journal (test/foundation/ledger.test.ts covers the crash side of that;
// test/pg covers the lease engine of several daemons).
describe.skipIf(usePostgres)('reservations held by the SQLite ledger', () => {
  it('an admitted call holds its unit until it settles; a release refunds it and records a failure', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: 1 } });
    const ctx = f.d.daemon.ctx;
    const r = await reserve(ctx, { userId: u.id, tier: 'free', keyId: null, keyLimits: null, keyAncestors: undefined, storeVersion: undefined }, { usageType: 'ai_chat', endpoint: 'chat', providerId: 'openai', model: 'gpt-4o-mini', alias: null, projectId: null, quote: HOLD });
    expect((await chat(u.key)).status).toBe(429); // the call in flight holds the only unit
    expect(await usageRecords(f.db, u.id)).toEqual([]); // nothing in the store while it runs
    await release(ctx, r, 503);
    await release(ctx, r, 503); // a second settle is a no-op
    expect(await usageRecords(f.db, u.id)).toMatchObject([{ status: 'failed', httpStatus: 503, customer: 0 }]);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    expect(await usageTransactions(f.db, u.id)).toEqual([]);
    expect((await chat(u.key)).status).toBe(200);
    expect(await quotaUsed(f.db, u.id)).toBe(1);
  });

  it('a finalized call counts against the quota and the wallet before it reaches the store', async () => {
    const u = await f.d.user({ tier: 'free', balance: 0.000009, quotas: { ai_chat: 2 } });
    const ctx = f.d.daemon.ctx;
    const r = await reserve(ctx, { userId: u.id, tier: 'free', keyId: null, keyLimits: null, keyAncestors: undefined, storeVersion: undefined }, { usageType: 'ai_chat', endpoint: 'chat', providerId: 'openai', model: 'gpt-4o-mini', alias: null, projectId: null, quote: HOLD });
    const cost = { model: 'gpt-4o-mini', promptTokens: 10, completionTokens: 5, units: 0, rawNano: 4500, customerNano: 9000 };
    await finalize(ctx, r, 'openai', cost, 200);
    // the booking is in the journal; the next admission counts its unit and its debit
    const ledger = (ctx.db as { ledger?: { hasPending: boolean } }).ledger;
    expect(ledger?.hasPending).toBe(true);
    const refused = await chat(u.key);
    expect(refused.status).toBe(402); // 9000 nano-USD booked = the whole balance
    expect(await walletRow(f.db, u.id)).toMatchObject({ balance: 0 }); // a read applies what is pending
    expect(ledger?.hasPending).toBe(false);
    expect(await quotaUsed(f.db, u.id)).toBe(1);
  });
});

describe('provider keys', () => {
  it('503 ALPHA_KEY_MISSING / BETA_KEY_MISSING when a chat provider has no key', async () => {
    const g = await startGatewayFixture({ openaiKey: false, anthropicKey: false });
    try {
      const u = await g.d.user({ tier: 'pro', balance: 1 });
      const a = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
      expect(a.status).toBe(503);
      expect((await a.json()).code).toBe('ALPHA_KEY_MISSING');
      const b = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'claude-haiku-4-5', messages } });
      expect(b.status).toBe(503);
      expect((await b.json()).code).toBe('BETA_KEY_MISSING');
      expect(await quotaUsed(g.db, u.id)).toBe(0);
      expect(g.openai.requests.length + g.anthropic.requests.length).toBe(0);
    } finally {
      await g.close();
    }
  });

  it('an alias skips a target whose provider has no key', async () => {
    const g = await startGatewayFixture({ anthropicKey: false });
    try {
      const u = await g.d.user({ tier: 'pro', balance: 1 });
      const res = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'smart-pro', messages } });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-resolved-provider')).toBe('openai');
      expect(res.headers.get('x-service-resolved-model')).toBe('gpt-4o');
    } finally {
      await g.close();
    }
  });
});
