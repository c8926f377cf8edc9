import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicInputTokens, countTokens, openAiPromptTokens, simReply } from '../../src/daemon/demo/upstreams.js';
import {
  expectedCostNano,
  quotaUsed,
  sseData,
  startGatewayFixture,
  usageRecords,
  usageTransactions,
  type GatewayFixture,
} from '../helpers/gateway-fixture.js';

const YAML = `
smartRoutes:
  best-cheap-llm:
    - { provider: anthropic, model: claude-opus-4-1 }
    - { provider: openai, model: gpt-4o-mini }
    - { provider: anthropic, model: claude-3-5-haiku-latest }
    - { provider: groq, model: llama-3.1-8b-instant }
  best-quality-llm:
    - { provider: openai, model: gpt-4o-mini }
    - { provider: anthropic, model: claude-opus-4-1 }
    - { provider: openai, model: gpt-4.1 }
  best-fast-llm:
    - { provider: anthropic, model: claude-haiku-4-5 }
    - { provider: openai, model: gpt-4.1-nano }
gateway: { failureThreshold: 100 }
`;

let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture({ yaml: YAML });
});
afterAll(async () => {
  await f?.close();
});

const question = 'Which route is cheapest?';
const messages = [{ role: 'user', content: question }];
const smart = (key: string, json: Record<string, unknown>, headers: Record<string, string> = {}) =>
  f.d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key, json: { messages, ...json }, headers });

describe('POST /api/external/smart/v1/chat/completions', () => {
  it('best-cheap-llm picks the lowest retail price among providers with a key', async () => {
    const u = await f.d.user({ tier: 'free', balance: 10 });
    const res = await smart(u.key, { model: 'best-cheap-llm' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-smart-route-provider')).toBe('openai');
    expect(res.headers.get('x-smart-route-model')).toBe('gpt-4o-mini');
    const body = await res.json();
    expect(body).toMatchObject({ object: 'chat.completion', model: 'gpt-4o-mini' });
    expect(JSON.parse(f.openai.requests.at(-1)!.body).model).toBe('gpt-4o-mini');
    const cost = expectedCostNano('openai', 'gpt-4o-mini', openAiPromptTokens(messages), countTokens(simReply(question)));
    expect((await usageRecords(f.db, u.id))[0]).toMatchObject({ status: 'finalized', provider: 'openai', model: 'gpt-4o-mini', alias: 'best-cheap-llm', customer: cost });
  });

  it('best-quality-llm orders by band, premium first', async () => {
    const u = await f.d.user({ tier: 'free', balance: 10 });
    const res = await smart(u.key, { model: 'best-quality-llm' });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-smart-route-provider')).toBe('anthropic');
    expect(res.headers.get('x-smart-route-model')).toBe('claude-opus-4-1');
    // a messages-style answer comes back in the common chat shape
    const body = await res.json();
    const input = anthropicInputTokens(undefined, messages);
    const output = countTokens(simReply(question));
    expect(body).toMatchObject({
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: simReply(question) }, finish_reason: 'stop' }],
      usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
    });
    expect((await usageRecords(f.db, u.id))[0]).toMatchObject({ provider: 'anthropic', model: 'claude-opus-4-1', customer: expectedCostNano('anthropic', 'claude-opus-4-1', input, output) });
  });

  it('fails over on a 5xx to the next candidate, in order, and books one call against the one that answered', async () => {
    const u = await f.d.user({ tier: 'free', balance: 10 });
    const o = f.openai.requests.length;
    const a = f.anthropic.requests.length;
    f.openai.setMode('error');
    try {
      const res = await smart(u.key, { model: 'best-cheap-llm' });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-smart-route-provider')).toBe('anthropic');
      expect(res.headers.get('x-smart-route-model')).toBe('claude-3-5-haiku-latest');
      expect((await res.json()).choices[0].message.content).toBe(simReply(question));
    } finally {
      f.openai.setMode('ok');
    }
    expect(f.openai.requests.length - o).toBe(1);
    expect(f.anthropic.requests.length - a).toBe(1);
    expect(JSON.parse(f.anthropic.requests.at(-1)!.body)).toMatchObject({ model: 'claude-3-5-haiku-latest', max_tokens: 8_192, messages }) // no max_tokens: the model's output limit;
    expect((await usageRecords(f.db, u.id)).map((r) => [r.status, r.provider, r.model])).toEqual([['finalized', 'anthropic', 'claude-3-5-haiku-latest']]);
    expect(await usageTransactions(f.db, u.id)).toHaveLength(1);
    expect(await quotaUsed(f.db, u.id)).toBe(1);
  });

  it('fails over on a connection error too; streams come back as common-format chunks', async () => {
    const u = await f.d.user({ tier: 'free', balance: 10 });
    f.openai.setMode('down');
    try {
      const res = await smart(u.key, { model: 'best-cheap-llm', stream: true });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-smart-route-provider')).toBe('anthropic');
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const data = sseData(await res.text());
      expect(data.at(-1)).toBe('[DONE]');
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
      expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(simReply(question));
      expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('stop');
      const input = anthropicInputTokens(undefined, messages);
      expect(chunks.at(-1).usage).toEqual({
        prompt_tokens: input,
        completion_tokens: countTokens(simReply(question)),
        total_tokens: input + countTokens(simReply(question)),
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      });
    } finally {
      f.openai.setMode('ok');
    }
    expect((await usageRecords(f.db, u.id))[0]).toMatchObject({ status: 'finalized', provider: 'anthropic', model: 'claude-3-5-haiku-latest' });
  });

  it('503 ALL_CANDIDATES_FAILED when every candidate fails; nothing charged, unit refunded', async () => {
    const u = await f.d.user({ tier: 'free', balance: 10 });
    f.openai.setMode('error');
    f.anthropic.setMode('rate_limit');
    try {
      const res = await smart(u.key, { model: 'best-cheap-llm' });
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body.code).toBe('ALL_CANDIDATES_FAILED');
      expect(body.error).toContain('openai/gpt-4o-mini: HTTP 500');
      expect(body.error).toContain('anthropic/claude-3-5-haiku-latest: HTTP 429');
    } finally {
      f.openai.setMode('ok');
      f.anthropic.setMode('ok');
    }
    expect((await usageRecords(f.db, u.id)).map((r) => r.status)).toEqual(['failed']);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    expect(await usageTransactions(f.db, u.id)).toEqual([]);
  });

  it('best-fast-llm tries unmeasured candidates first, then prefers the lower recorded latency', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    f.anthropic.setMode('slow', { delayMs: 250 });
    try {
      const seen: string[] = [];
      // each a conversation's first call (a conversation stays where it was served)
      for (let i = 0; i < 3; i++) {
        const res = await smart(u.key, { model: 'best-fast-llm', user: `fast-${i}` });
        expect(res.status).toBe(200);
        seen.push(res.headers.get('x-smart-route-provider')!);
      }
      expect(seen).toEqual(['anthropic', 'openai', 'openai']);
    } finally {
      f.anthropic.setMode('ok');
    }
  });

  it('refuses bad bodies and empty wallets before any upstream call', async () => {
    const u = await f.d.user({ tier: 'free', balance: 10 });
    const before = f.openai.requests.length + f.anthropic.requests.length;
    const wrong = await smart(u.key, { model: 'gpt-4o' });
    expect(wrong.status).toBe(400);
    expect(await wrong.json()).toMatchObject({ code: 'INVALID_REQUEST' });
    const hot = await smart(u.key, { model: 'best-cheap-llm', temperature: 9 });
    expect((await hot.json()).code).toBe('INVALID_REQUEST');
    const none = await f.d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'best-cheap-llm' } });
    expect((await none.json()).code).toBe('MISSING_MESSAGES');
    const broke = await f.d.user({ tier: 'free' });
    const poor = await smart(broke.key, { model: 'best-cheap-llm' });
    expect(poor.status).toBe(402);
    expect((await poor.json()).code).toBe('INSUFFICIENT_FUNDS');
    expect((await f.d.fetch('/external/smart/v1/chat/completions', { method: 'POST', json: { model: 'best-cheap-llm', messages } })).status).toBe(401);
    expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
  });
});

describe('circuit breaker', () => {
  it('keeps a failing provider out for the cooldown, then lets one trial call through', async () => {
    const g = await startGatewayFixture({ yaml: `${YAML.replace('gateway: { failureThreshold: 100 }', '')}gateway: { failureThreshold: 2, cooldownMs: 600 }\n` });
    try {
      const u = await g.d.user({ tier: 'free', balance: 10 });
      // each a conversation's first call (a conversation stays where it was served)
      let n = 0;
      const call = () => g.d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'best-cheap-llm', messages, user: `c${n++}` } });
      g.openai.setMode('error');
      for (let i = 0; i < 2; i++) expect((await call()).headers.get('x-smart-route-provider')).toBe('anthropic');
      expect(g.openai.requests.length).toBe(2);
      // open: openai is not even contacted
      expect((await call()).headers.get('x-smart-route-provider')).toBe('anthropic');
      expect(g.openai.requests.length).toBe(2);
      g.openai.setMode('ok');
      await new Promise((r) => setTimeout(r, 700));
      // half-open after the cooldown: the trial succeeds and closes the breaker
      expect((await call()).headers.get('x-smart-route-provider')).toBe('openai');
      expect((await call()).headers.get('x-smart-route-provider')).toBe('openai');
      expect(g.openai.requests.length).toBe(4);
    } finally {
      await g.close();
    }
  });
});
