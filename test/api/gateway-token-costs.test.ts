import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { quotaUsed, usageRecords, usageTransactions, walletRow } from '../helpers/gateway-fixture.js';

/**
 * Exact cost for every token class (issue #29, CONTRACT third round), measured as the issue's
 * probe measured it: through the proxy, margin 2, the catalog's prices, on both stores. The
 * upstream answers with the usage shapes of the providers' API references:
 * - Anthropic Messages usage with cache_creation (https://docs.claude.com/en/api/messages;
 *   prices https://docs.claude.com/en/docs/about-claude/pricing: claude-sonnet-4-5 $3/M in,
 *   $15/M out, cache reads 0.1x, 5-minute writes 1.25x, 1-hour writes 2x; above 200k prompt
 *   tokens $6/$22.50, reads $0.60, writes $7.50/$12);
 * - Gemini usageMetadata (https://ai.google.dev/api/generate-content#UsageMetadata; prices
 *   https://ai.google.dev/gemini-api/docs/pricing: 2.5 Pro $1.25/$10, above 200k $2.50/$15);
 * - OpenAI Responses usage and its stream's response.completed
 *   (https://platform.openai.com/docs/api-reference/responses; gpt-4.1 $2/$8);
 * - Anthropic count_tokens (https://docs.claude.com/en/api/messages-count-tokens): free.
 */
const PROBE = { input_tokens: 100, cache_creation_input_tokens: 1000, cache_read_input_tokens: 5000, output_tokens: 50 };
const LONG = 1_000_000; // characters of a long prompt: 250k tokens as the provider counts them

let upstream: Server;
let d: TestDaemon;
const seen: string[] = [];

function answer(req: IncomingMessage, raw: string): { type: string; body: string } {
  const path = req.url ?? '';
  const body = JSON.parse(raw || '{}') as Record<string, unknown>;
  const json = (o: unknown) => ({ type: 'application/json', body: JSON.stringify(o) });
  if (path === '/v1/messages/count_tokens') return json({ input_tokens: 2048 });
  if (path.startsWith('/v1/messages')) {
    const text = JSON.stringify(body.messages);
    const usage = text.includes('probe-5m')
      ? { ...PROBE, cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 0 } }
      : text.includes('probe-1h')
        ? { ...PROBE, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 1000 } }
        : { input_tokens: 250_000, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1000 };
    return json({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage });
  }
  if (path.includes(':generateContent')) {
    const usageMetadata = body.cachedContent
      ? { promptTokenCount: 150_020, cachedContentTokenCount: 150_000, candidatesTokenCount: 400, totalTokenCount: 150_420 }
      : { promptTokenCount: 250_000, candidatesTokenCount: 1000, totalTokenCount: 251_000 };
    return json({ candidates: [{ content: { parts: [{ text: 'ok' }], role: 'model' }, finishReason: 'STOP', index: 0 }], usageMetadata, modelVersion: 'gemini-2.5-pro' });
  }
  if (path === '/v1/responses') {
    const usage = { input_tokens: 150_000, input_tokens_details: { cached_tokens: 0 }, output_tokens: 525, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 150_525 };
    const response = { id: 'resp_2', object: 'response', status: 'completed', model: 'gpt-4.1-2025-04-14', previous_response_id: body.previous_response_id, output: [], usage };
    if (!body.stream) return json(response);
    const ev = (o: Record<string, unknown>) => `event: ${String(o.type)}\ndata: ${JSON.stringify(o)}\n\n`;
    return {
      type: 'text/event-stream',
      body:
        ev({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', usage: null } }) +
        ev({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_2', output_index: 0, content_index: 0, delta: 'Done.' }) +
        ev({ type: 'response.completed', sequence_number: 2, response }),
    };
  }
  if (path.startsWith('/v1/batches')) return json({ id: 'batch_1', object: 'batch', status: 'completed' });
  return json({});
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      const a = answer(req, raw);
      res.writeHead(200, { 'content-type': a.type });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  const env: Record<string, string> = {};
  for (const p of ['ANTHROPIC', 'OPENAI', 'GOOGLE']) Object.assign(env, { [`AGW_PROVIDER_${p}_BASE_URL`]: url, [`AGW_PROVIDER_${p}_KEY`]: 'sk-test-0123456789' });
  d = await startTestDaemon({ env });
});
afterAll(async () => {
  await d?.close();
  await new Promise((r) => upstream?.close(r));
});

/** The one call of a fresh user with `balance` USD: what it was charged, held and wrote off, and its wallet line. */
async function call(path: string, json: Record<string, unknown>, balance = 40) {
  const u = await d.user({ tier: 'enterprise', balance });
  const res = await d.fetch(`/external/${path}`, { method: 'POST', key: u.key, json });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const [rec] = await usageRecords(d.daemon.ctx.db, u.id);
  const tx = await (await d.fetch('/wallet/transactions', { key: u.key })).json();
  return { text, rec, tx: tx.items[0] as { amount: number; description: string }, record: await (await d.fetch(`/requests/${res.headers.get('x-request-id')}`, { key: u.key })).json() };
}

const sonnet = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'claude-sonnet-4-5', max_tokens: 1000, messages: [{ role: 'user', content: text }], ...extra });

describe('every token class is charged at its price (margin 2)', () => {
  test('Anthropic 100 input / 1,000 5-minute writes / 5,000 reads / 50 output: $0.0126', async () => {
    const { rec, tx } = await call('anthropic/v1/messages', sonnet('probe-5m'));
    expect(rec.raw).toBe(6_300_000);
    expect(rec.customer).toBe(12_600_000);
    expect(rec.writtenOff).toBe(0);
    expect(tx.amount).toBe(-0.0126);
    expect(tx.description).toBe('proxy anthropic/claude-sonnet-4-5: 100 input tokens, 5,000 cached input tokens, 1,000 cache-write tokens (5 min), 50 output tokens');
  });

  test('the same with 1-hour writes: $0.0171, the record naming the writes', async () => {
    const { rec, tx, record } = await call('anthropic/v1/messages', sonnet('probe-1h'));
    expect(rec.customer).toBe(17_100_000);
    expect(rec.writtenOff).toBe(0);
    expect(tx.amount).toBe(-0.0171);
    expect(tx.description).toContain('1,000 cache-write tokens (1 h)');
    expect(record).toMatchObject({ promptTokens: 6100, cachedTokens: 5000, cacheWriteTokens: 1000, completionTokens: 50 });
  });

  test('Claude Sonnet 4.5 above 200k prompt tokens (1M context): every token at the tier, $3.045', async () => {
    const { rec, tx } = await call('anthropic/v1/messages', sonnet(`long ${'a'.repeat(LONG)}`));
    expect(rec.raw).toBe(1_522_500_000);
    expect(rec.customer).toBe(3_045_000_000);
    expect(rec.writtenOff).toBe(0);
    expect(tx.description).toBe('proxy anthropic/claude-sonnet-4-5: 250,000 input tokens, 1,000 output tokens at the price above 200,000 prompt tokens');
  });

  test('Gemini 2.5 Pro with 250k prompt tokens: the above-200k price, $1.28', async () => {
    const { rec } = await call('google/v1beta/models/gemini-2.5-pro:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'a'.repeat(LONG) }] }],
      generationConfig: { maxOutputTokens: 1000 },
    });
    expect(rec.customer).toBe(1_280_000_000);
    expect(rec.writtenOff).toBe(0);
  });
});

describe('context held at the provider is held for, nothing written off', () => {
  for (const stream of [false, true]) {
    test(`a Responses call with previous_response_id, 150k input tokens reported (${stream ? 'streamed: response.completed' : 'JSON'}): $0.6084`, async () => {
      const { rec } = await call('openai/v1/responses', { model: 'gpt-4.1', previous_response_id: 'resp_1', input: 'Now the tests.', max_output_tokens: 1000, stream }, 10);
      // hold: the context window (1,047,576 tokens) at $2/M + 1,000 output tokens at $8/M, x 2
      expect(rec.hold).toBe(2 * (1_047_576 * 2000 + 1000 * 8000));
      expect(rec.customer).toBe(608_400_000);
      expect(rec.writtenOff).toBe(0);
    });
  }

  test('a Gemini call naming a cachedContent: 150,020 prompt tokens of which 150,000 cached, $0.04555', async () => {
    const { rec } = await call('google/v1beta/models/gemini-2.5-pro:generateContent', {
      cachedContent: 'cachedContents/handbook',
      contents: [{ role: 'user', parts: [{ text: 'Summarise chapter 3.' }] }],
      generationConfig: { maxOutputTokens: 1000 },
    });
    expect(rec.customer).toBe(45_550_000);
    expect(rec.writtenOff).toBe(0);
  });

  test('a Responses call without held context is held for its body only', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 0.05 });
    const res = await d.fetch('/external/openai/v1/responses', { method: 'POST', key: u.key, json: { model: 'gpt-4.1', input: 'hi', max_output_tokens: 1000 } });
    expect(res.status).toBe(200);
  });
});

describe('calls that cost the provider nothing cost nothing', () => {
  test('count_tokens on an empty wallet answers 200 and books nothing', async () => {
    const u = await d.user({ tier: 'free', balance: 0 });
    const res = await d.fetch('/external/anthropic/v1/messages/count_tokens', { method: 'POST', key: u.key, json: sonnet('x'.repeat(10_000)) });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ input_tokens: 2048 });
    expect(await usageRecords(d.daemon.ctx.db, u.id, { refused: true })).toEqual([]);
    expect(await usageTransactions(d.daemon.ctx.db, u.id)).toEqual([]);
    expect(await walletRow(d.daemon.ctx.db, u.id)).toEqual({ balance: 0, allowanceUsed: 0 });
    expect(await quotaUsed(d.daemon.ctx.db, u.id)).toBe(0);
  });

  test('a batch is refused through the proxy (501 BATCH_NOT_METERED, never forwarded); so is reading one (the account’s, not the caller’s)', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 5 });
    const before = seen.length;
    const res = await d.fetch('/external/openai/v1/batches', { method: 'POST', key: u.key, json: { input_file_id: 'file-1', endpoint: '/v1/chat/completions', completion_window: '24h' } });
    expect(res.status).toBe(501);
    expect(res.headers.get('x-should-retry')).toBe('false');
    expect(await res.json()).toMatchObject({ code: 'BATCH_NOT_METERED', details: { provider: 'openai', path: '/v1/batches' } });
    const anthropicBatch = await d.fetch('/external/anthropic/v1/messages/batches', { method: 'POST', key: u.key, json: { requests: [] } });
    expect(anthropicBatch.status).toBe(501);
    expect(seen.slice(before)).toEqual([]);
    const status = await d.fetch('/external/openai/v1/batches/batch_1', { key: u.key });
    expect(status.status).toBe(403);
    expect((await status.json()).code).toBe('PROXY_PATH_NOT_ALLOWED');
    expect(seen.slice(before)).toEqual([]);
    expect(await usageTransactions(d.daemon.ctx.db, u.id)).toEqual([]);
    expect((await walletRow(d.daemon.ctx.db, u.id)).balance).toBe(5_000_000_000);
  });
});

describe('the public catalog shows every class with its retail twin', () => {
  test('claude-sonnet-4-5: cache writes and the tier above 200k', async () => {
    const cat = await (await d.fetch('/portal/providers/public')).json();
    const m = cat.providers.find((p: { id: string }) => p.id === 'anthropic').pricing.models.find((x: { model: string }) => x.model === 'claude-sonnet-4-5');
    expect(m).toMatchObject({
      inputPer1M: 3,
      cachedInputPer1M: 0.3,
      cacheWritePer1M: 3.75,
      cacheWrite1hPer1M: 6,
      outputPer1M: 15,
      cacheWritePer1MRetail: 7.5,
      cacheWrite1hPer1MRetail: 12,
      cachedInputPer1MRetail: 0.6,
      tiers: [{ aboveInputTokens: 200_000, inputPer1M: 6, outputPer1M: 22.5, cachedInputPer1M: 0.6, cacheWritePer1M: 7.5, cacheWrite1hPer1M: 12, inputPer1MRetail: 12, outputPer1MRetail: 45 }],
    });
    const gpt = cat.providers.find((p: { id: string }) => p.id === 'openai').pricing.models.find((x: { model: string }) => x.model === 'gpt-4.1');
    // classes OpenAI does not price fall back to the input price
    expect(gpt).toMatchObject({ cacheWritePer1M: 2, cacheWrite1hPer1M: 2, tiers: [], contextTokens: 1_047_576 });
  });
});
