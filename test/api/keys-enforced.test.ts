import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import OpenAI from 'openai';
import { startGatewayFixture, usageRecords, type GatewayFixture } from '../helpers/gateway-fixture.js';

/**
 * Keys with limits, enforced on the gateway (CONTRACT "Keys with limits", issue #17), on
 * both stores: rpm / tpm as token buckets with OpenAI's x-ratelimit-* headers and
 * Retry-After, the budget through holds (a burst never takes a key past it), and a key
 * made with a limited key spending from its maker's limits too.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const messages = [{ role: 'user', content: 'Hello there' }];
const CHAT = { model: 'gpt-4o-mini', messages, max_tokens: 100 };
const chat = (key: string, json: Record<string, unknown> = CHAT) => f.d.fetch('/gateway/chat', { method: 'POST', key, json });

/** A new key of `owner` made over POST /api/keys with these limits. */
async function limitedKey(ownerKey: string, limits: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const res = await f.d.fetch('/keys', { method: 'POST', key: ownerKey, json: { name: 'limited', limits } });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function owner() {
  return f.d.user({ tier: 'pro', balance: 10, quotas: { ai_chat: -1 } });
}

describe('rate limits per key', () => {
  test('rpm 5: exactly 5 of 12 sequential calls pass; the 6th carries Retry-After and every answer the x-ratelimit headers', async () => {
    const k = await limitedKey((await owner()).key, { rpm: 5 });
    const answers: Response[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await chat(k.key);
      await r.arrayBuffer();
      answers.push(r);
    }
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429, 429, 429, 429, 429, 429]);
    answers.slice(0, 5).forEach((r, i) => {
      expect(r.headers.get('x-ratelimit-limit-requests')).toBe('5');
      expect(r.headers.get('x-ratelimit-remaining-requests')).toBe(String(4 - i));
      expect(r.headers.get('x-ratelimit-reset-requests')).toMatch(/^(\d+ms|[\d.]+s|\d+m\d+s)$/);
    });
    const sixth = answers[5];
    const ra = Number(sixth.headers.get('retry-after'));
    expect(ra).toBeGreaterThanOrEqual(1);
    expect(ra).toBeLessThanOrEqual(12);
    expect(sixth.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(sixth.headers.get('x-request-id')).toMatch(/^use_/);
    // entitlements asked with the key say what is left of its windows
    const e = await (await f.d.fetch('/gateway/entitlements', { key: k.key })).json();
    expect(e.key).toMatchObject({ limits: { rpm: 5 }, requestsRemaining: 0, tokensRemaining: null });
  });

  test('the key’s rate headers win over the provider’s on the proxy, and a 403 for a model outside the key’s list carries them too', async () => {
    const k = await limitedKey((await owner()).key, { rpm: 7, models: ['gpt-4o-mini'] });
    // the simulated provider answers OpenAI's own x-ratelimit-* (10000) and x-request-id
    const r = await f.d.fetch('/external/openai/v1/chat/completions', { method: 'POST', key: k.key, json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] } });
    await r.arrayBuffer();
    expect(r.status).toBe(200);
    expect(r.headers.get('x-ratelimit-limit-requests')).toBe('7');
    expect(r.headers.get('x-ratelimit-remaining-requests')).toBe('6');
    expect(r.headers.get('x-request-id')).toMatch(/^use_/);
    expect(r.headers.get('x-upstream-request-id')).toMatch(/^req_sim_/);
    const refused = await f.d.fetch('/gateway/chat', { method: 'POST', key: k.key, json: { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(refused.status).toBe(403);
    expect((await refused.json()).code).toBe('MODEL_NOT_ALLOWED');
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('7');
    expect(refused.headers.get('x-ratelimit-remaining-requests')).toBe('6'); // a refusal takes nothing from the window
  });

  test('rpm 10 with 30 parallel calls: exactly 10 pass, 20 get 429 RATE_LIMITED', async () => {
    const k = await limitedKey((await owner()).key, { rpm: 10 });
    const answers = await Promise.all(Array.from({ length: 30 }, () => chat(k.key)));
    const bodies = await Promise.all(answers.map((r) => r.json()));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    expect(bodies.filter((b) => b.code === 'RATE_LIMITED')).toHaveLength(20);
  });

  test('the official openai SDK with maxRetries waits out the window and succeeds', async () => {
    const o = await owner();
    const k = await limitedKey(o.key, { rpm: 60 });
    // empty the window: more calls at once than it holds
    const burst = await Promise.all(Array.from({ length: 70 }, () => chat(k.key)));
    await Promise.all(burst.map((r) => r.arrayBuffer()));
    expect(burst.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    const statuses: number[] = [];
    const client = new OpenAI({
      apiKey: k.key,
      baseURL: `${f.d.api}/external/openai/v1`,
      maxRetries: 3,
      fetch: async (url, init) => {
        const r = await fetch(url, init);
        statuses.push(r.status);
        return r;
      },
    });
    // The window refills a call a second: on a slow machine the SDK's first try may come
    // after a refill and pass at once. Then the window is emptied again and the SDK tried
    // again, until its first try was refused (each round ~1% likely to miss on a slow run).
    let refusedBefore = 0;
    for (let round = 0; round < 4 && !statuses.includes(429); round++) {
      statuses.length = 0;
      for (let i = 0; i < 100; i++) {
        const r = await chat(k.key);
        await r.arrayBuffer();
        if (r.status === 429) break;
      }
      refusedBefore = (await usageRecords(f.db, o.id, { refused: true })).filter((r) => r.status === 'refused').length;
      const out = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 10 });
      expect(out.choices[0].message.content).toBeTruthy();
    }
    // it was told to wait (429 with retry-after-ms, recorded), waited, and got through
    expect(statuses[0]).toBe(429);
    expect(statuses.at(-1)).toBe(200);
    const refusedAfter = (await usageRecords(f.db, o.id, { refused: true })).filter((r) => r.status === 'refused').length;
    expect(refusedAfter).toBeGreaterThan(refusedBefore);
  });

  test('tpm: the hold counts at admission; a call bigger than what is left is refused with the tokens trio', async () => {
    const k = await limitedKey((await owner()).key, { tpm: 5000 });
    const first = await chat(k.key, { ...CHAT, max_tokens: 3000 });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-limit-tokens')).toBe('5000');
    // the first call used far fewer tokens than it held: they came back at settlement
    const second = await chat(k.key, { ...CHAT, max_tokens: 3000 });
    expect(second.status).toBe(200);
    const third = await chat(k.key, { ...CHAT, max_tokens: 4900 });
    expect(third.status).toBe(429);
    expect((await third.json()).details).toMatchObject({ which: 'tokens', limit: 5000 });
  });
});

describe('budgets per key', () => {
  test('a burst never takes a key past its budget; 402 KEY_BUDGET_EXCEEDED names budget, spent and reset; the wallet is untouched beyond it', async () => {
    const o = await owner();
    // a hold of 100 output tokens at gpt-4o-mini is ~0.00013 USD: a budget of 0.0005 covers 3 at once
    const k = await limitedKey(o.key, { budget: 0.0005, budgetPeriod: 'day' });
    f.openai.setMode('slow', { delayMs: 1200 });
    let answers: Response[];
    try {
      answers = await Promise.all(Array.from({ length: 10 }, () => chat(k.key)));
    } finally {
      f.openai.setMode('ok');
    }
    const bodies = await Promise.all(answers.map((r) => r.json()));
    const ok = answers.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(1);
    expect(ok).toBeLessThanOrEqual(3);
    const refused = bodies.filter((b) => b.code === 'KEY_BUDGET_EXCEEDED');
    expect(refused).toHaveLength(10 - ok);
    expect(refused[0].details).toMatchObject({ budget: 0.0005, budgetPeriod: 'day' });
    expect(typeof refused[0].details.resetsAt).toBe('string');
    const recs = (await usageRecords(f.db, o.id)).filter((r) => r.status === 'finalized');
    const spent = recs.reduce((s, r) => s + r.customer, 0);
    expect(spent).toBeLessThanOrEqual(500_000);
    const list = await (await f.d.fetch('/keys', { key: o.key })).json();
    expect(list.items.find((x: { id: string }) => x.id === k.id).spent).toBeCloseTo(spent / 1e9, 9);
  });

  test('keys made with a limited key share its budget: a child cannot spend what its maker has not got', async () => {
    const o = await owner();
    // a hold is ~0.00015 USD; each call costs far less, so 0.0002 covers a hold and then a little
    const parent = await limitedKey(o.key, { budget: 0.0002, budgetPeriod: 'total' });
    const child = await limitedKey(parent.key, { budget: 0.0002, budgetPeriod: 'total' });
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await chat(i % 2 ? parent.key : child.key)).status);
    // together no more than the parent's budget, and the child was stopped by it
    const recs = (await usageRecords(f.db, o.id)).filter((r) => r.status === 'finalized');
    expect(recs.reduce((s, r) => s + r.customer, 0)).toBeLessThanOrEqual(200_000);
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses).toContain(402);
    const refusedChild = await (await chat(child.key)).json();
    expect(refusedChild.code).toBe('KEY_BUDGET_EXCEEDED');
  });
});
