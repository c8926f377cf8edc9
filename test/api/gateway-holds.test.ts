import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { quoteTokens } from '../../src/daemon/money/hold.js';
import { outbound } from '../../src/daemon/gateway/translate/plan.js';
import { nanoToUsd } from '../../src/shared/money.js';
import { bundle, publishJson } from './skills-helpers.js';
import { OPENAI_KEY, startGatewayFixture, usageRecords, usageTransactions, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';

/**
 * Holds (CONTRACT "Spending order … Holds", issue #15): a call is admitted only when
 * allowance left + balance − the holds of calls in flight cover its own worst case, so
 * no burst can overdraw a wallet; settling charges the actual cost, never more than
 * the hold. Runs on both stores.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const messages = [{ role: 'user', content: 'Hello there' }];
const CHAT = { model: 'gpt-4o-mini', messages, max_tokens: 1000 };

/** The hold agw takes for `body` on unified chat to OpenAI (the same rule, from the daemon's config; the body as validated, defaults included). */
function holdOf(body: Record<string, unknown>): number {
  const config = f.d.daemon.ctx.config;
  const provider = config.providers.get('openai')!;
  const out = outbound({ format: 'common', body: { ...body, stream: body.stream ?? false } }, { provider, model: String(body.model), maxOutput: 16_384 });
  return quoteTokens(config, provider, String(body.model), out.text, out.body).nano;
}

const chat = (key: string, json: Record<string, unknown> = CHAT) => f.d.fetch('/gateway/chat', { method: 'POST', key, json });
const wallet = async (key: string) => (await f.d.fetch('/wallet', { key })).json();

describe('holds: no burst overdraws a wallet', () => {
  it('20 parallel calls on a wallet covering 4 holds: 4 served, 16 refused 402 with the details; never below zero', async () => {
    const hold = holdOf(CHAT);
    const credit = Math.floor(hold * 4.5);
    const u = await f.d.user({ tier: 'free', balance: nanoToUsd(credit), quotas: { ai_chat: -1 } });
    // slow enough that every admission happens while the first calls still run
    f.openai.setMode('slow', { delayMs: 1500 });
    let answers: Response[];
    try {
      answers = await Promise.all(Array.from({ length: 20 }, () => chat(u.key)));
    } finally {
      f.openai.setMode('ok');
    }
    const bodies = await Promise.all(answers.map((r) => r.json()));
    const ok = answers.filter((r) => r.status === 200).length;
    expect(ok).toBe(4);
    const refused = bodies.filter((_, i) => answers[i].status === 402);
    expect(refused).toHaveLength(16);
    for (const b of refused) {
      expect(b.code).toBe('INSUFFICIENT_FUNDS');
      expect(b.details).toMatchObject({ currency: 'USD', monthlyAllowance: 0, required: nanoToUsd(hold) });
      expect(typeof b.details.balance).toBe('number');
      expect(b.details.maxAffordableTokens).toBeLessThan(1000);
      expect(b.error).toMatch(/send max_tokens ≤ [0-9,]+ or ask an operator for credit \(agw admin wallet credit\)/);
    }
    const w = await walletRow(f.db, u.id);
    expect(w.balance).toBeGreaterThanOrEqual(0);
    const debits = await usageTransactions(f.db, u.id);
    expect(debits).toHaveLength(4);
    expect(debits.reduce((s, t) => s - t.amount, 0)).toBeLessThanOrEqual(credit);
    expect(debits.reduce((s, t) => s - t.amount, 0)).toBe(credit - w.balance);
    expect(await wallet(u.key)).toMatchObject({ held: 0, heldCalls: 0 });
    // with the burst over, what is left covers more calls
    expect((await chat(u.key)).status).toBe(200);
  });

  it('a max_tokens the wallet cannot cover is refused before the upstream is contacted, naming what it can afford', async () => {
    const u = await f.d.user({ tier: 'free', balance: 0.01, quotas: { ai_chat: -1 } });
    const before = f.openai.requests.length;
    const big = { ...CHAT, max_tokens: 100_000 };
    const res = await chat(u.key, big);
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(f.openai.requests.length).toBe(before);
    const affordable = body.details.maxAffordableTokens as number;
    expect(affordable).toBeGreaterThan(1000);
    expect(affordable).toBeLessThan(16_384);
    expect(body.error).toContain(`max_tokens ≤ ${affordable.toLocaleString('en-US')}`);
    expect(body.details.required).toBeCloseTo(nanoToUsd(holdOf(big)), 9);
    // what the message names goes through
    const fits = await chat(u.key, { ...CHAT, max_tokens: affordable });
    expect(fits.status).toBe(200);
    expect(holdOf({ ...CHAT, max_tokens: affordable })).toBeLessThanOrEqual(10_000_000);
  });

  it('an absurd max_tokens for a model agw has no price row for is a 402 like any other, never a 500', async () => {
    const u = await f.d.user({ tier: 'free', balance: 5, quotas: { ai_chat: -1 } });
    const before = f.openai.requests.length;
    for (const max_tokens of [1e15, Number.MAX_SAFE_INTEGER]) {
      const res = await f.d.fetch('/external/openai/v1/chat/completions', {
        method: 'POST',
        key: u.key,
        json: { model: 'gpt-unlisted-preview', messages, max_tokens },
      });
      expect(res.status).toBe(402);
      expect((await res.json()).code).toBe('INSUFFICIENT_FUNDS');
    }
    expect(f.openai.requests.length).toBe(before);
    // and the wallet still serves an ordinary call
    expect((await chat(u.key)).status).toBe(200);
  });

  it('GET /api/wallet shows what calls in flight hold, and nothing once they settled', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: -1 } });
    f.openai.setMode('slow', { delayMs: 600 });
    try {
      const calls = [chat(u.key), chat(u.key)];
      await new Promise((r) => setTimeout(r, 250));
      const during = await wallet(u.key);
      expect(during.heldCalls).toBe(2);
      expect(during.held).toBeCloseTo(nanoToUsd(2 * holdOf(CHAT)), 12);
      expect(during.balance).toBe(1);
      await Promise.all((await Promise.all(calls)).map((r) => r.arrayBuffer()));
    } finally {
      f.openai.setMode('ok');
    }
    const after = await wallet(u.key);
    expect(after).toMatchObject({ held: 0, heldCalls: 0 });
    expect(after.balance).toBeLessThan(1);
  });

  it('an unlimited wallet takes no hold: it may call with nothing in it, and holds nothing while it runs', async () => {
    const u = await f.d.user({ tier: 'free', unlimited: true, quotas: { ai_chat: -1 } });
    f.openai.setMode('slow', { delayMs: 400 });
    try {
      const call = chat(u.key, { ...CHAT, max_tokens: 100_000 });
      await new Promise((r) => setTimeout(r, 150));
      expect((await wallet(u.key)).held).toBe(0);
      expect((await call).status).toBe(200);
    } finally {
      f.openai.setMode('ok');
    }
  });

  it('a stream the client abandons mid-way is booked once, for no more than its hold', async () => {
    const g = await startGatewayFixture({ chunkDelayMs: 40 });
    try {
      const u = await g.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: -1 } });
      const ac = new AbortController();
      const res = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { ...CHAT, stream: true }, signal: ac.signal });
      const reader = res.body!.getReader();
      await reader.read();
      ac.abort();
      await new Promise((r) => setTimeout(r, 500));
      const recs = await usageRecords(g.db, u.id);
      expect(recs).toHaveLength(1);
      expect(recs[0].customer).toBeLessThanOrEqual(recs[0].hold);
      const debits = await usageTransactions(g.db, u.id);
      expect(debits.length).toBeLessThanOrEqual(1);
      expect((await g.d.fetch('/wallet', { key: u.key }).then((r) => r.json())).held).toBe(0);
    } finally {
      await g.close();
    }
  });

  it('a paid install takes part in admission: with calls in flight holding most of the wallet it is refused; after them it goes through', async () => {
    const hold = holdOf(CHAT);
    const owner = await f.d.user({ tier: 'pro' });
    const price = nanoToUsd(hold * 2);
    const pub = await publishJson(f.d, owner.key, { version: '1.0.0', price, category: 'other' }, bundle('held-thing'));
    expect(pub.status).toBe(200);
    const id = (await pub.json()).id as number;
    const buyer = await f.d.user({ tier: 'free', balance: nanoToUsd(hold * 4), quotas: { ai_chat: -1 } });
    f.openai.setMode('slow', { delayMs: 700 });
    let calls: Promise<Response>[] = [];
    try {
      calls = [chat(buyer.key), chat(buyer.key), chat(buyer.key)];
      await new Promise((r) => setTimeout(r, 250));
      const refused = await f.d.fetch(`/skills/${id}/install`, { method: 'POST', key: buyer.key });
      expect(refused.status).toBe(402);
      const body = await refused.json();
      expect(body).toMatchObject({ code: 'INSUFFICIENT_FUNDS', details: { price } });
      expect(body.details.held).toBeCloseTo(nanoToUsd(3 * hold), 12);
      for (const r of await Promise.all(calls)) expect(r.status).toBe(200);
    } finally {
      f.openai.setMode('ok');
    }
    const ok = await f.d.fetch(`/skills/${id}/install`, { method: 'POST', key: buyer.key });
    expect(ok.status).toBe(200);
    expect((await walletRow(f.db, buyer.id)).balance).toBeGreaterThanOrEqual(0);
  });
});

describe('admission after a paid install', () => {
  it('sees the install’s debit at once: the next call with the same key is held against what is left', async () => {
    const hold = holdOf(CHAT);
    const owner = await f.d.user({ tier: 'pro' });
    const pub = await publishJson(f.d, owner.key, { version: '1.0.0', price: nanoToUsd(hold * 3), category: 'other' }, bundle('debit-seen'));
    const id = (await pub.json()).id as number;
    // 3.5 holds: one call (it costs far less than its hold), then the install (3 holds) leaves less than one
    const buyer = await f.d.user({ tier: 'free', balance: nanoToUsd(Math.floor(hold * 3.5)), quotas: { ai_chat: -1 } });
    expect((await chat(buyer.key)).status).toBe(200);
    expect((await f.d.fetch(`/skills/${id}/install`, { method: 'POST', key: buyer.key })).status).toBe(200);
    const next = await chat(buyer.key);
    expect(next.status).toBe(402);
    expect((await next.json()).code).toBe('INSUFFICIENT_FUNDS');
    expect((await usageRecords(f.db, buyer.id)).every((r) => r.writtenOff === 0)).toBe(true);
  });
});

describe('settling: the actual cost, never more than the hold', () => {
  let upstream: http.Server;
  let g: GatewayFixture;
  beforeAll(async () => {
    // an upstream that reports far more output than max_tokens allowed
    upstream = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.headers.authorization !== `Bearer ${OPENAI_KEY}`) return void res.writeHead(401).end();
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            model: 'gpt-4o-mini',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 1_000_000, total_tokens: 1_000_010 },
          }),
        );
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    g = await startGatewayFixture({ env: { AGW_PROVIDER_OPENAI_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}` } });
  });
  afterAll(async () => {
    await g?.close();
    await new Promise((r) => upstream?.close(r));
  });

  it('a provider that reports more than the hold covered is charged the hold; the rest is written off and shown', async () => {
    const u = await g.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: -1 } });
    const client = new OpenAI({ apiKey: u.key, baseURL: `${g.d.api}/external/openai/v1`, maxRetries: 0 });
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 10 });
    const [rec] = await usageRecords(g.db, u.id);
    expect(rec.status).toBe('finalized');
    expect(rec.completion).toBe(1_000_000); // the record keeps what the provider reported
    expect(rec.customer).toBe(rec.hold);
    expect(rec.writtenOff).toBeGreaterThan(0);
    const [debit] = await usageTransactions(g.db, u.id);
    expect(-debit.amount).toBe(rec.hold);
    const tx = await (await g.d.fetch('/wallet/transactions', { key: u.key })).json();
    expect(tx.items[0].description).toMatch(/written off/);
    expect((await walletRow(g.db, u.id)).balance).toBe(1_000_000_000 - rec.hold);
    const metrics = await (await fetch(`${g.d.api}/metrics`)).text();
    expect(metrics).toMatch(/agw_written_off_nusd_total\{provider="openai"\} [1-9]/);
  });
});
