import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { laneHarness } from '../helpers/fast-lane.js';
import { nanoToUsd, usdToNano } from '../../src/shared/money.js';
import { startGatewayFixture, usageRecords, usageTransactions, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';

/**
 * The proxy's fast lane (daemon/fast-lane/) answers a metered POST without fastify's
 * request pipeline. It must answer exactly as the route does through fastify: each case
 * below sends the same request both ways (the lane switched off for the first, on for the
 * second, the key in memory for both) and compares status, headers and body.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const { lane, post, bothWays, cutOffBody, bodyInTwoPieces, burstOnSmallWallet } = laneHarness(() => f);
const messages = [{ role: 'user', content: 'Through the lane, please' }];
const chat = JSON.stringify({ model: 'gpt-4o-mini', messages });

describe('proxy: the fast lane answers as fastify does', () => {
  it('a JSON answer: the same status, headers and body, booked the same', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const [a, b] = await bothWays(u.key, '/external/openai/v1/chat/completions', chat);
    expect(a.status).toBe(200);
    expect(b).toEqual(a);
    const records = await usageRecords(f.db, u.id);
    expect(records.map((r) => [r.status, r.httpStatus])).toEqual([
      ['finalized', 200],
      ['finalized', 200],
    ]);
    // one debit each, of the same amount (same prompt, same answer), taken from the allowance and the balance
    const debits = await usageTransactions(f.db, u.id);
    expect(debits.map((d) => d.usageId)).toEqual(records.map((r) => r.id));
    expect(debits[0].amount).toBeLessThan(0); // a debit
    expect(debits[1].amount).toBe(debits[0].amount);
    const w = await walletRow(f.db, u.id);
    expect(w.allowanceUsed + (5_000_000_000 - w.balance)).toBe(-2 * debits[0].amount);
  });

  it('a streamed answer: the same events', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const [a, b] = await bothWays(u.key, '/external/openai/v1/chat/completions', JSON.stringify({ model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } }));
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(a.body).toContain('data: [DONE]');
    expect(b).toEqual(a);
  });

  it("the provider's refusals (429 with its retry-after, 500) pass as they came, the charset added alike", async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    for (const mode of ['rate_limit', 'error'] as const) {
      f.openai.setMode(mode);
      try {
        const [a, b] = await bothWays(u.key, '/external/openai/v1/chat/completions', chat);
        expect(a.status).toBe(mode === 'rate_limit' ? 429 : 500);
        expect(b).toEqual(a);
      } finally {
        f.openai.setMode('ok');
      }
    }
  });

  it("agw's own refusals: an empty wallet, a path outside the provider's, a batch, a model name too long, a body that is not JSON", async () => {
    const empty = await f.d.user({ tier: 'free' });
    const [a, b] = await bothWays(empty.key, '/external/openai/v1/chat/completions', chat);
    expect(a.status).toBe(402);
    expect(b).toEqual(a);
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const cases: [string, string, number][] = [
      ['/external/openai/v1/fine_tuning/jobs', JSON.stringify({ model: 'gpt-4o-mini', training_file: 'f' }), 403],
      ['/external/openai/v1/batches', JSON.stringify({ input_file_id: 'f', endpoint: '/v1/chat/completions' }), 501],
      ['/external/openai/v1/chat/completions', JSON.stringify({ model: 'x'.repeat(5000), messages }), 400],
      ['/external/openai/v1/chat/completions', '{"model": "gpt-4o-mini", "messages": [', 0],
    ];
    for (const [path, body, status] of cases) {
      const [x, y] = await bothWays(u.key, path, body);
      if (status) expect(x.status, path).toBe(status);
      expect(y, path).toEqual(x);
    }
  });

  it('is counted in the route metric as fastify counts it', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const series = 'agw_http_requests_total{method="POST",route="/api/external/:provider/*",status="200"}';
    const count = async () => {
      const text = await (await f.d.fetch('/metrics')).text();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line ? Number(line.slice(series.length + 1)) : 0;
    };
    const before = await count();
    await bothWays(u.key, '/external/openai/v1/chat/completions', chat);
    expect(await count()).toBe(before + 2);
  });
});

describe('proxy: what the fast lane leaves to fastify', () => {
  it('a key not in memory, an unknown key, a body not declared JSON, a GET, an unknown provider, the smart route', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const taken = lane().taken;
    // the key's first call fills the key cache through fastify's hook
    expect((await post(u.key, '/external/openai/v1/chat/completions', chat)).status).toBe(200);
    expect((await post('agw_no_such_key_000000000000000000000000', '/external/openai/v1/chat/completions', chat)).status).toBe(401);
    expect((await post(u.key, '/external/openai/v1/chat/completions', chat, { 'content-type': 'text/plain' })).status).toBe(200);
    expect((await f.d.fetch('/external/openai/v1/models', { headers: { authorization: `Bearer ${u.key}` } })).status).toBe(200);
    expect((await post(u.key, '/external/no-such-provider/v1/chat/completions', chat)).status).toBe(404);
    const smart = await post(u.key, '/external/smart/v1/chat/completions', JSON.stringify({ model: 'best-cheap-llm', messages }));
    expect(smart.status, await smart.clone().text()).toBe(200);
    expect(lane().taken).toBe(taken);
    // the smart route's own paths are never the lane's, whatever providers are configured
    expect([...lane().claimed]).toEqual(['smart']);
    // and the next plain call takes it
    expect((await post(u.key, '/external/openai/v1/chat/completions', chat)).status).toBe(200);
    expect(lane().taken).toBe(taken + 1);
  });
});

describe('proxy: the fast lane and a body in pieces', () => {
  it('a body that comes after its head, in two pieces: read whole, sent upstream as it came, booked once', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const upstream = f.openai.requests.length;
    const a = await bodyInTwoPieces(u.key, '/external/openai/v1/chat/completions', chat);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body).object).toBe('chat.completion');
    expect(f.openai.requests.length).toBe(upstream + 1);
    expect(JSON.parse(f.openai.requests.at(-1)!.body)).toEqual(JSON.parse(chat));
    expect((await usageRecords(f.db, u.id)).map((r) => r.status)).toEqual(['finalized']);
  });
});

describe('proxy: the fast lane and the booking applier', () => {
  it("a call after the daemon's own bookings reached the store still takes the lane: its key stays in memory", async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const path = '/external/openai/v1/chat/completions';
    expect((await post(u.key, path, chat)).status).toBe(200); // the key goes in memory
    for (let i = 1; i <= 3; i++) {
      // reading the records applies the pending bookings first: a commit of the daemon's own
      expect((await usageRecords(f.db, u.id)).length).toBe(i);
      const taken = lane().taken;
      expect((await post(u.key, path, chat)).status).toBe(200);
      expect(lane().taken, `call ${i + 1}, after the bookings of ${i} reached the store`).toBe(taken + 1);
    }
  });
});

describe('proxy: the fast lane and a caller that leaves', () => {
  it('a body cut off halfway: nothing sent upstream, nothing booked, the daemon answers the next call', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    expect((await post(u.key, '/external/openai/v1/chat/completions', chat)).status).toBe(200);
    const upstream = f.openai.requests.length;
    await cutOffBody(u.key, '/external/openai/v1/chat/completions');
    expect(f.openai.requests.length).toBe(upstream);
    expect((await usageRecords(f.db, u.id)).length).toBe(1);
    expect((await post(u.key, '/external/openai/v1/chat/completions', chat)).status).toBe(200);
  });
});

describe('proxy: the fast lane and money', () => {
  it('20 parallel calls through the lane on a wallet covering 4 holds: 4 served, 16 refused 402; never below zero, every debit once', async () => {
    const body = JSON.stringify({ model: 'gpt-4o-mini', messages, max_tokens: 1000 });
    // the hold of this call, as the 402 of an empty wallet names it
    const broke = await f.d.user({ tier: 'free' });
    const probe = await post(broke.key, '/external/openai/v1/chat/completions', body);
    expect(probe.status).toBe(402);
    const hold = usdToNano((await probe.json()).details.required);
    const credit = Math.floor(hold * 4.5);
    const u = await f.d.user({ tier: 'free', balance: nanoToUsd(credit), quotas: { ai_chat: -1 } });
    // a refused call, free, puts the key in memory: the burst takes the lane
    expect((await post(u.key, '/external/openai/v1/fine_tuning/jobs', body)).status).toBe(403);
    await burstOnSmallWallet(u, '/external/openai/v1/chat/completions', body);
  });
});
