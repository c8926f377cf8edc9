import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { anthropicInputTokens, countTokens, openAiPromptTokens, simReply } from '../../src/daemon/demo/upstreams.js';
import { OPENAI_KEY, sseData, startGatewayFixture, usageTransactions, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { openSse } from '../helpers/sse.js';
import { liveOf } from '../../src/daemon/requests/live.js';

/**
 * The request log fed by real gateway calls (chat, smart route, proxy; streamed and not;
 * refused ones): each answer's x-request-id names a record whose figures are the wallet
 * debit and the upstream's own usage; the live stream sees the calls; /api/metrics counts
 * their tokens and cost; with logs.bodies the bodies are kept, capped and redacted.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(() => f?.close());

const messages = [{ role: 'user', content: 'Name three rivers.' }];

async function record(id: string, key: string) {
  const r = await f.d.fetch(`/requests/${id}`, { key });
  expect(r.status).toBe(200);
  return (await r.json()) as any;
}

describe('each gateway call has a record named by its x-request-id', () => {
  test('unified chat, JSON: tokens are the upstream’s usage, cost is the wallet debit', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    const body = await res.json();
    const rec = await record(id, u.key);
    const [tx] = await usageTransactions(f.db, u.id);
    expect(tx.usageId).toBe(id);
    expect(rec).toMatchObject({
      id,
      endpoint: 'chat',
      keyId: u.keyId,
      projectId: null,
      provider: 'openai',
      model: 'gpt-4o-mini',
      alias: null,
      stream: false,
      status: 200,
      code: null,
      promptTokens: body.usage.prompt_tokens,
      completionTokens: body.usage.completion_tokens,
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      cost: -tx.amount / 1e9,
      attempts: 1,
      droppedParams: [],
    });
    expect(rec.promptTokens).toBe(openAiPromptTokens(messages));
    expect((await walletRow(f.db, u.id)).balance).toBe(1e9 - Math.round(rec.cost * 1e9));
    expect(rec.latencyMs).toBeGreaterThan(0);
    expect(rec.ttfbMs).toBeGreaterThan(0);
    expect(rec.ttfbMs).toBeLessThanOrEqual(rec.latencyMs);
    expect(Date.parse(rec.createdAt)).toBeLessThanOrEqual(Date.now());
  });

  test('a streamed chat through an alias: the alias, the concrete model, stream true, time to first byte before the end', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'smart-pro', messages, stream: true } });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    await res.text();
    const rec = await record(id, u.key);
    const [tx] = await usageTransactions(f.db, u.id);
    expect(rec).toMatchObject({ endpoint: 'chat', provider: 'anthropic', model: 'claude-sonnet-4-5', alias: 'smart-pro', stream: true, status: 200, cost: -tx.amount / 1e9 });
    expect(rec.promptTokens).toBe(anthropicInputTokens(undefined, messages));
    expect(rec.completionTokens).toBe(countTokens(simReply('Name three rivers.')));
    expect(rec.ttfbMs).toBeLessThanOrEqual(rec.latencyMs);
  });

  test('the smart route names its class as the alias and counts the upstreams it tried', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    f.openai.setMode('error');
    try {
      const res = await f.d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'best-cheap-llm', messages } });
      expect(res.status).toBe(200);
      const rec = await record(res.headers.get('x-request-id')!, u.key);
      expect(rec).toMatchObject({ endpoint: 'smart', alias: 'best-cheap-llm', provider: 'anthropic', model: 'claude-3-5-haiku-latest', attempts: 2, status: 200 });
    } finally {
      f.openai.setMode('ok');
    }
  });

  test('the proxy: the provider’s own path, streamed, the model from the body', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await f.d.fetch('/external/openai/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true } } });
    expect(res.status).toBe(200);
    const chunks = sseData(await res.text());
    const usage = JSON.parse(chunks.filter((c) => c !== '[DONE]').at(-1)!).usage;
    const rec = await record(res.headers.get('x-request-id')!, u.key);
    expect(rec).toMatchObject({ endpoint: 'proxy', provider: 'openai', model: 'gpt-4o-mini', stream: true, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
  });

  test('refused calls are recorded with their status and code: 402 funds, 403 model outside the tier, 429 upstream limit', async () => {
    const poor = await f.d.user({ tier: 'free' });
    const r402 = await f.d.fetch('/gateway/chat', { method: 'POST', key: poor.key, json: { model: 'gpt-4o-mini', messages } });
    expect(r402.status).toBe(402);
    const r403 = await f.d.fetch('/gateway/chat', { method: 'POST', key: poor.key, json: { model: 'smart-pro', messages } });
    expect(r403.status).toBe(403);
    const rich = await f.d.user({ tier: 'pro', balance: 5 });
    f.openai.setMode('rate_limit');
    let r429;
    try {
      r429 = await f.d.fetch('/gateway/chat', { method: 'POST', key: rich.key, json: { model: 'gpt-4o-mini', messages } });
    } finally {
      f.openai.setMode('ok');
    }
    expect(r429.status).toBe(429);
    const recs = [await record(r402.headers.get('x-request-id')!, poor.key), await record(r403.headers.get('x-request-id')!, poor.key)];
    expect(recs[0]).toMatchObject({ status: 402, code: 'INSUFFICIENT_FUNDS', cost: 0, attempts: 0, provider: 'openai', model: 'gpt-4o-mini' });
    expect(recs[1]).toMatchObject({ status: 403, code: 'MODEL_NOT_ALLOWED', cost: 0, attempts: 0, alias: 'smart-pro' });
    expect(await record(r429.headers.get('x-request-id')!, rich.key)).toMatchObject({ status: 429, code: 'UPSTREAM_RATE_LIMITED', cost: 0, attempts: 1 });
    const errors = await (await f.d.fetch('/requests?status=error', { key: poor.key })).json();
    expect(errors.items.map((x: any) => x.status).sort()).toEqual([402, 403]);
  });
});

describe('calls refused before any upstream is chosen have a record too', () => {
  test('an unknown provider (proxy), an unknown model and an unavailable smart class: each answer names its record', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const cases = [
      { res: await f.d.fetch('/external/nosuch/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'x', messages } }), status: 404, code: 'PROVIDER_NOT_FOUND', endpoint: 'proxy' },
      { res: await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'no-such-model-1', messages } }), status: 400, code: 'INVALID_REQUEST', endpoint: 'chat' },
    ];
    for (const c of cases) {
      expect(c.res.status).toBe(c.status);
      expect((await c.res.json()).code).toBe(c.code);
      const id = c.res.headers.get('x-request-id');
      expect(id, c.code).toMatch(/^use_/);
      expect(await record(id!, u.key)).toMatchObject({ status: c.status, code: c.code, endpoint: c.endpoint, cost: 0, attempts: 0 });
    }
    // a free GET through the proxy is not a metered call: no record, no id
    const get = await f.d.fetch('/external/nosuch/v1/models', { key: u.key });
    expect(get.status).toBe(404);
    expect(get.headers.get('x-request-id')).toBeNull();
  });
});

describe('live stream and metrics from gateway calls', () => {
  test('a call shows up on the caller’s stream as it settles, and in the token and cost counters', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const sse = await openSse(`${f.d.api}/requests/stream`, { authorization: `Bearer ${u.key}` });
    await new Promise((r) => setTimeout(r, 200));
    const metric = async (name: string) => {
      const text = await (await f.d.fetch('/metrics')).text();
      const line = text.split('\n').find((l) => l.startsWith(name));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    const tokensBefore = await metric('agw_gateway_tokens_total{provider="openai",model="gpt-4o-mini",kind="completion"}');
    const costBefore = await metric('agw_gateway_cost_usd_total{provider="openai",model="gpt-4o-mini"}');
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
    const body = await res.json();
    const [e] = await sse.waitFor(1);
    const live = JSON.parse(e.data);
    expect(live).toEqual(await record(res.headers.get('x-request-id')!, u.key));
    expect(await metric('agw_gateway_tokens_total{provider="openai",model="gpt-4o-mini",kind="completion"}')).toBe(tokensBefore + body.usage.completion_tokens);
    expect(await metric('agw_gateway_cost_usd_total{provider="openai",model="gpt-4o-mini"}')).toBeCloseTo(costBefore + live.cost, 9);
    sse.close();
    for (let i = 0; i < 50 && liveOf(f.d.daemon.ctx).size; i++) await new Promise((r) => setTimeout(r, 20));
    expect(liveOf(f.d.daemon.ctx).size).toBe(0);
  });
});

describe('logs.bodies', () => {
  test('off by default: no bodies in the detail', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
    expect((await record(res.headers.get('x-request-id')!, u.key)).bodies).toBeUndefined();
  });

  test('on: the request and the answer are kept, provider keys, agw_ keys and bearer tokens redacted', async () => {
    const g = await startGatewayFixture({ yaml: 'logs:\n  bodies: true\n' });
    try {
      const u = await g.d.user({ tier: 'pro', balance: 5 });
      const secret = `my key is ${u.key}, theirs ${OPENAI_KEY}, header Bearer abcdefghijklmnop1234`;
      const res = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: secret }] } });
      const answer = await res.text();
      expect(answer).toContain(OPENAI_KEY.slice(0, 12)); // the sim echoes the prompt
      const rec = (await (await g.d.fetch(`/requests/${res.headers.get('x-request-id')}`, { key: u.key })).json()) as any;
      const { request, response } = rec.bodies;
      for (const b of [request, response]) {
        expect(b.truncated).toBe(false);
        expect(b.text).toContain('[redacted]');
        expect(b.text).not.toContain(u.key);
        expect(b.text).not.toContain(OPENAI_KEY);
        expect(b.text).not.toContain('abcdefghijklmnop1234');
      }
      expect(request.bytes).toBeGreaterThan(0);
      expect(response.bytes).toBe(Buffer.byteLength(answer));
      expect(JSON.parse(request.text.replace(/\[redacted\]/g, 'X')).model).toBe('gpt-4o-mini');
      // a refusal keeps agw's own Error body as the answer
      const poor = await g.d.user({ tier: 'free' });
      const r402 = await g.d.fetch('/gateway/chat', { method: 'POST', key: poor.key, json: { model: 'gpt-4o-mini', messages } });
      const refused = (await (await g.d.fetch(`/requests/${r402.headers.get('x-request-id')}`, { key: poor.key })).json()) as any;
      expect(JSON.parse(refused.bodies.response.text).code).toBe('INSUFFICIENT_FUNDS');
      // a stream is tapped as it goes by: the answer kept is what the client got
      const s = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages, stream: true } });
      const streamed = await s.text();
      const srec = (await (await g.d.fetch(`/requests/${s.headers.get('x-request-id')}`, { key: u.key })).json()) as any;
      expect(srec.bodies.response.text).toBe(streamed);
    } finally {
      await g.close();
    }
  });
});
