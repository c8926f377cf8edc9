import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { laneHarness } from '../helpers/fast-lane.js';
import { nanoToUsd, usdToNano } from '../../src/shared/money.js';
import { startGatewayFixture, usageRecords, usageTransactions, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';

/**
 * Unified chat's fast lane (daemon/fast-lane/chat.ts) answers its three doors (/gateway/chat,
 * the OpenAI-compatible /gateway/v1/chat/completions, the Anthropic-compatible
 * /gateway/v1/messages) without fastify's request pipeline, and hands a request whose body,
 * hooks or schema find fault back to fastify with the same bytes. Each case sends the same
 * request both ways (the lane off for the first, on for the second, the key in memory for
 * both) and compares status, headers and body.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const { lane, post, bothWays, cutOffBody, burstOnSmallWallet } = laneHarness(() => f);
const messages = [{ role: 'user', content: 'Through the lane, please' }];
const common = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'gpt-4o-mini', messages, ...extra });
const anthropic = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 50, messages, ...extra });

const CHAT = '/gateway/chat';
const OPENAI = '/gateway/v1/chat/completions';
const MESSAGES = '/gateway/v1/messages';

/** A user whose key is in memory (a first call, through fastify, fills the key cache). */
async function warmUser(opts: Parameters<GatewayFixture['d']['user']>[0]) {
  const u = await f.d.user(opts);
  lane().enabled = false;
  try {
    await (await f.d.fetch('/gateway/v1/models', { headers: { authorization: `Bearer ${u.key}` } })).text();
  } finally {
    lane().enabled = true;
  }
  return u;
}

describe('unified chat: the fast lane answers as fastify does', () => {
  it('a JSON answer at each door, in each answer shape: the same status, headers and body, booked the same', async () => {
    const u = await warmUser({ tier: 'pro', balance: 5 });
    const cases: [string, string, Record<string, string>?][] = [
      [CHAT, common()],
      [CHAT, common(), { 'x-service-response-format': 'anthropic' }],
      [CHAT, anthropic(), { 'x-service-response-format': 'openai' }],
      [OPENAI, common()],
      [OPENAI, anthropic()],
      [MESSAGES, anthropic()],
      [MESSAGES, common({ max_tokens: 50 })],
      [`${MESSAGES}?beta=true`, anthropic(), { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'prompt-caching-2024-07-31' }],
    ];
    for (const [path, body, headers] of cases) {
      const [a, b] = await bothWays(u.key, path, body, { headers });
      expect(a.status, `${path} ${a.body}`).toBe(200);
      expect(b, path).toEqual(a);
    }
    // two calls per case, each booked once, the pairs for the same amount
    const records = await usageRecords(f.db, u.id);
    expect(records.map((r) => [r.status, r.httpStatus])).toEqual(cases.flatMap(() => [['finalized', 200], ['finalized', 200]]));
    const debits = await usageTransactions(f.db, u.id);
    expect(debits.map((d) => d.usageId)).toEqual(records.map((r) => r.id));
    for (let i = 0; i < debits.length; i += 2) expect(debits[i + 1].amount, `case ${i / 2}`).toBe(debits[i].amount);
    const w = await walletRow(f.db, u.id);
    expect(w.allowanceUsed + (5_000_000_000 - w.balance)).toBe(-debits.reduce((s, d) => s + d.amount, 0));
  });

  it('a streamed answer at each door: the same events', async () => {
    const u = await warmUser({ tier: 'pro', balance: 5 });
    for (const [path, body] of [
      [CHAT, common({ stream: true, stream_options: { include_usage: true } })],
      [OPENAI, anthropic({ stream: true })],
      [MESSAGES, anthropic({ stream: true })],
    ]) {
      const [a, b] = await bothWays(u.key, path, body);
      expect(a.status, path).toBe(200);
      expect(a.headers['content-type'], path).toMatch(/^text\/event-stream/);
      expect(b, path).toEqual(a);
    }
  });

  it("the provider's refusals (429 with its retry-after, 500), in each door's error shape", async () => {
    const u = await warmUser({ tier: 'pro', balance: 5 });
    for (const mode of ['rate_limit', 'error'] as const) {
      f.openai.setMode(mode);
      try {
        for (const path of [CHAT, OPENAI, MESSAGES]) {
          const [a, b] = await bothWays(u.key, path, common({ max_tokens: 50 }));
          expect(a.status, `${mode} ${path}`).toBe(mode === 'rate_limit' ? 429 : 503);
          expect(b, `${mode} ${path}`).toEqual(a);
        }
      } finally {
        f.openai.setMode('ok');
      }
    }
  });

  it("agw's own refusals after the checks (an empty wallet, an unknown model, a strict call it cannot honour), in each door's shape", async () => {
    const empty = await warmUser({ tier: 'free' });
    for (const path of [CHAT, OPENAI, MESSAGES]) {
      const [a, b] = await bothWays(empty.key, path, common({ max_tokens: 50 }));
      expect(a.status, path).toBe(402);
      expect(b, path).toEqual(a);
    }
    const u = await warmUser({ tier: 'pro', balance: 5 });
    for (const path of [CHAT, OPENAI, MESSAGES]) {
      const [a, b] = await bothWays(u.key, path, anthropic({ model: 'no-such-model-anywhere' }));
      expect(a.status, path).toBeGreaterThanOrEqual(400);
      expect(b, path).toEqual(a);
    }
    const [a, b] = await bothWays(u.key, OPENAI, anthropic({ logit_bias: { '42': 1 } }), { headers: { 'x-service-strict-params': '1' } });
    expect(a.status, a.body).toBe(400);
    expect(a.body).toContain('UNSUPPORTED_PARAMETER');
    expect(b).toEqual(a);
  });
});

describe('unified chat: a fault the lane finds goes to fastify with the same bytes', () => {
  it('not JSON, a poisoned prototype, no model, no messages, a field out of range, a bad message, a header out of its set: fastify’s own answers', async () => {
    const u = await warmUser({ tier: 'pro', balance: 5 });
    const faults: [string, Record<string, string>?][] = [
      ['{"model": "gpt-4o-mini", "messages": ['],
      ['{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "__proto__": {"admin": true}}'],
      [JSON.stringify({ messages })],
      [JSON.stringify({ model: 'gpt-4o-mini' })],
      [common({ temperature: 7 })],
      [common({ messages: [{ role: 'user', content: 42 }] })],
      [JSON.stringify([1, 2])],
      [common(), { 'x-service-response-format': 'yaml' }],
      [common(), { 'x-service-strict-params': 'yes' }],
    ];
    const before = (await usageRecords(f.db, u.id)).length;
    for (const path of [CHAT, OPENAI, MESSAGES]) {
      for (const [body, headers] of faults) {
        // a header only the route's schema names is no fault where the route has no such header
        const fault = !(headers?.['x-service-response-format'] && path !== CHAT);
        const [a, b] = await bothWays(u.key, path, body, { headers, replayed: fault });
        if (fault) expect(a.status, `${path} ${body}`).toBe(400);
        expect(b, `${path} ${body}`).toEqual(a);
      }
    }
    // none of the faults reached a provider or the books; the header that was no fault did, twice per door
    expect((await usageRecords(f.db, u.id)).length - before).toBe(4);
  });

  it('is counted in the route metric once, whichever way it went', async () => {
    const u = await warmUser({ tier: 'pro', balance: 5 });
    const count = async (status: number) => {
      const series = `agw_http_requests_total{method="POST",route="/api/gateway/chat",status="${status}"}`;
      const text = await (await f.d.fetch('/metrics')).text();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line ? Number(line.slice(series.length + 1)) : 0;
    };
    const [ok, bad] = [await count(200), await count(400)];
    await bothWays(u.key, CHAT, common());
    await bothWays(u.key, CHAT, common({ temperature: 7 }), { replayed: true });
    expect([await count(200), await count(400)]).toEqual([ok + 2, bad + 2]);
  });
});

describe('unified chat: the lane runs what fastify would', () => {
  /** A route's hooks as fastify lists them after start-up (its plugin's included), by kind. */
  function hooksOf(url: string): Record<string, string[]> {
    const lines = f.d.daemon.app.printRoutes({ includeHooks: true, commonPrefix: false }).split('\n');
    const last = url.slice(url.lastIndexOf('/') + 1);
    const at = lines.findIndex((l) => l.endsWith(`${last} (POST)`));
    expect(at, url).toBeGreaterThanOrEqual(0);
    const hooks: Record<string, string[]> = {};
    for (const l of lines.slice(at + 1)) {
      const m = /• \((\w+)\) (\[.*\])$/.exec(l);
      if (!m) break;
      hooks[m[1]] = JSON.parse(m[2]) as string[];
    }
    return hooks;
  }

  it("each lane route's pipeline is the key check, the replay, its checks, the error shape the lane applies and the metric", () => {
    const routes = [...lane().routes.values()];
    expect(routes.map((r) => r.url).sort()).toEqual(['/api/gateway/chat', '/api/gateway/v1/chat/completions', '/api/gateway/v1/messages']);
    for (const r of routes) {
      const hooks = hooksOf(r.url);
      expect(hooks, r.url).toEqual({
        onRequest: ['gatewayAuth()'],
        preParsing: ['replayBody()'],
        preValidation: [r.url.endsWith('messages') ? 'requireMessagesBody()' : 'requireModelAndMessages()'],
        // the compatible base URLs' plugins reshape error bodies: the lane must know the shape
        ...(r.shape ? { onSend: ['compatErrors()'] } : {}),
        onResponse: ['anonymous()'], // the route metric (app.ts), which the lane counts itself
      });
      expect(r.xApiKey, r.url).toBe(r.url.endsWith('messages'));
    }
  });

  it('values the schema coerces reach the provider coerced, as through fastify; a poisoned constructor is refused by fastify', async () => {
    const u = await warmUser({ tier: 'pro', balance: 5 });
    const upstream = f.openai.requests.length;
    const [a, b] = await bothWays(u.key, OPENAI, common({ max_tokens: '50' }));
    expect(a.status, a.body).toBe(200);
    expect(b).toEqual(a);
    // both ways the provider got a number
    const sent = f.openai.requests.slice(upstream).map((r) => (JSON.parse(r.body) as { max_tokens?: unknown }).max_tokens);
    expect(sent).toEqual([50, 50]);
    const poisoned = '{"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}], "constructor": {"prototype": {"admin": true}}}';
    const [x, y] = await bothWays(u.key, CHAT, poisoned, { replayed: true });
    expect(x.status).toBe(400);
    expect(y).toEqual(x);
  });
});

describe('unified chat: what the fast lane leaves to fastify', () => {
  it('a key not in memory, an unknown key, x-api-key where the route takes only Bearer, a body not declared JSON', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const taken = lane().taken;
    expect((await post(u.key, CHAT, common())).status).toBe(200);
    expect((await post('agw_no_such_key_000000000000000000000000', CHAT, common())).status).toBe(401);
    const viaXApiKey = await f.d.fetch(OPENAI, { method: 'POST', headers: { 'x-api-key': u.key, 'content-type': 'application/json' }, body: common() });
    expect(viaXApiKey.status).toBe(401);
    expect((await post(u.key, CHAT, common(), { 'content-type': 'text/plain' })).status).toBe(400);
    expect(lane().taken).toBe(taken);
    // the Anthropic door takes x-api-key, as its auth hook does
    const viaAnthropic = await f.d.fetch(MESSAGES, { method: 'POST', headers: { 'x-api-key': u.key, 'content-type': 'application/json' }, body: anthropic() });
    expect(viaAnthropic.status).toBe(200);
    expect(lane().taken).toBe(taken + 1);
  });

  it('a body cut off halfway: nothing sent upstream, nothing booked, the daemon answers the next call', async () => {
    const u = await warmUser({ tier: 'pro', balance: 5 });
    const upstream = f.openai.requests.length;
    await cutOffBody(u.key, CHAT);
    expect(f.openai.requests.length).toBe(upstream);
    expect(await usageRecords(f.db, u.id)).toHaveLength(0);
    expect((await post(u.key, CHAT, common())).status).toBe(200);
  });
});

describe('unified chat: the fast lane and money', () => {
  it('20 parallel calls through the lane on a wallet covering 4 holds: 4 served, 16 refused 402; never below zero, every debit once', async () => {
    const body = common({ max_tokens: 1000 });
    // the hold of this call, as the 402 of an empty wallet names it
    const broke = await warmUser({ tier: 'free' });
    const probe = await post(broke.key, CHAT, body);
    expect(probe.status).toBe(402);
    const hold = usdToNano((await probe.json()).details.required);
    const u = await warmUser({ tier: 'free', balance: nanoToUsd(Math.floor(hold * 4.5)), quotas: { ai_chat: -1 } });
    await burstOnSmallWallet(u, CHAT, body);
  });
});
