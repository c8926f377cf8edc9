import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens, openAiPromptTokens, simReply } from '../../src/daemon/demo/upstreams.js';
import { usdToNano } from '../../src/shared/money.js';
import {
  ANTHROPIC_KEY,
  OPENAI_KEY,
  expectedCostNano,
  headerDump,
  quotaUsed,
  sseData,
  startGatewayFixture,
  usageRecords,
  usageTransactions,
  walletRow,
  type GatewayFixture,
} from '../helpers/gateway-fixture.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** A unit-priced provider stand-in: records requests, answers fixed binary bytes. */
async function binaryUpstream(): Promise<{ url: string; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(parts) });
      res.writeHead(200, { 'content-type': 'audio/mpeg', 'x-upstream-id': 'u-1' });
      res.end(Buffer.from([0xff, 0xfb, 0x90, 0x00, 0x01, 0x02]));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

function rawPost(url: string, key: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  const path = url.slice(url.indexOf('/', 'http://'.length));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end('{}');
  });
}

let f: GatewayFixture;
let audio: Awaited<ReturnType<typeof binaryUpstream>>;
beforeAll(async () => {
  audio = await binaryUpstream();
  f = await startGatewayFixture({
    env: {
      AGW_PROVIDER_ELEVENLABS_BASE_URL: audio.url,
      AGW_PROVIDER_ELEVENLABS_KEY: 'el-key-123',
      AGW_PROVIDER_FAL_BASE_URL: audio.url,
      AGW_PROVIDER_FAL_KEY: 'fal-key-456',
    },
  });
});
afterAll(async () => {
  await f?.close();
  await audio?.close();
});

const messages = [{ role: 'user', content: 'Proxy me, please' }];
const post = (path: string, key: string, body: string, headers: Record<string, string> = {}) =>
  f.d.fetch(path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body });

describe('proxy: POST /api/external/{provider}/{path}', () => {
  it('forwards path, query and body byte for byte with the provider key and answers the provider’s JSON unchanged', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const raw = `{ "model":"gpt-4o-mini",  "messages": ${JSON.stringify(messages)}, "logit_bias": {"50256": -100}, "user":"é" }`;
    const res = await post('/external/openai/v1/chat/completions?api-version=2024-01-01&x=%2F', u.key, raw, { 'x-custom-header': 'kept' });
    expect(res.status).toBe(200);
    const text = await res.text();
    const seen = f.openai.requests.at(-1)!;
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.query).toBe('api-version=2024-01-01&x=%2F');
    expect(seen.body).toBe(raw);
    expect(seen.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(seen.headers['x-custom-header']).toBe('kept');
    expect(headerDump(seen.headers)).not.toContain('agw_');
    const body = JSON.parse(text);
    expect(body.object).toBe('chat.completion');
    const prompt = openAiPromptTokens(messages);
    const completion = countTokens(simReply(messages[0].content));
    expect(body.usage.prompt_tokens).toBe(prompt);
    const cost = expectedCostNano('openai', 'gpt-4o-mini', prompt, completion);
    expect((await walletRow(f.db, u.id)).balance).toBe(1_000_000_000 - cost);
    expect(await usageTransactions(f.db, u.id)).toMatchObject([{ amount: -cost, provider: 'openai', model: 'gpt-4o-mini' }]);
    expect(await quotaUsed(f.db, u.id)).toBe(1);
  });

  it('accepts the agw_ key in x-api-key (Anthropic SDK style) and sends the provider’s own x-api-key and version', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const raw = JSON.stringify({ model: 'claude-3-5-haiku-latest', max_tokens: 50, messages });
    const res = await f.d.fetch('/external/anthropic/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': u.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'tools-2024' },
      body: raw,
    });
    expect(res.status).toBe(200);
    expect((await res.json()).type).toBe('message');
    const seen = f.anthropic.requests.at(-1)!;
    expect(seen.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(seen.headers['anthropic-beta']).toBe('tools-2024');
    expect(headerDump(seen.headers)).not.toContain(u.key);
    // without the caller's anthropic-version the provider's required header is added
    const res2 = await f.d.fetch('/external/anthropic/v1/messages', { method: 'POST', headers: { 'x-api-key': u.key, 'content-type': 'application/json' }, body: raw });
    expect(res2.status).toBe(200);
    expect(f.anthropic.requests.at(-1)!.headers['anthropic-version']).toBe('2023-06-01');
    expect(await usageTransactions(f.db, u.id)).toHaveLength(2);
  });

  it('streams SSE unchanged; bills from the usage chunk, or at the prompt’s bound when the caller asked for none', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const prompt = openAiPromptTokens(messages);
    const completion = countTokens(simReply(messages[0].content));
    const cost = expectedCostNano('openai', 'gpt-4o-mini', prompt, completion);
    const sent: number[] = [];
    for (const withUsage of [true, false]) {
      const json = { model: 'gpt-4o-mini', messages, stream: true, ...(withUsage ? { stream_options: { include_usage: true } } : {}) };
      const res = await post('/external/openai/v1/chat/completions', u.key, JSON.stringify(json));
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const data = sseData(await res.text());
      expect(data.at(-1)).toBe('[DONE]');
      expect(data.some((d) => d.includes('"usage"'))).toBe(withUsage); // nothing injected by the proxy
      expect(JSON.parse(f.openai.requests.at(-1)!.body)).toEqual(json);
      sent.push(Buffer.byteLength(f.openai.requests.at(-1)!.body));
    }
    // without usage the prompt is booked at the hold's bound (the body's bytes, never below what
    // the provider counts), the completion from the streamed text (ceil(chars/4), the sim's count)
    const recs = await usageRecords(f.db, u.id);
    expect(recs.map((r) => [r.status, r.prompt, r.completion, r.customer])).toEqual([
      ['finalized', prompt, completion, cost],
      ['finalized', sent[1], completion, expectedCostNano('openai', 'gpt-4o-mini', sent[1], completion)],
    ]);
  });

  it('passes a provider 429 through unchanged with its retry-after, charges nothing and refunds the unit', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    f.openai.setMode('rate_limit');
    try {
      const res = await post('/external/openai/v1/chat/completions', u.key, JSON.stringify({ model: 'gpt-4o-mini', messages }));
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('1');
      expect((await res.json()).error.code).toBe('rate_limit_exceeded'); // the provider's own body
    } finally {
      f.openai.setMode('ok');
    }
    f.openai.setMode('error');
    try {
      const res = await post('/external/openai/v1/chat/completions', u.key, JSON.stringify({ model: 'gpt-4o-mini', messages }));
      expect(res.status).toBe(500);
      expect((await res.json()).error.type).toBe('server_error');
    } finally {
      f.openai.setMode('ok');
    }
    expect((await usageRecords(f.db, u.id)).map((r) => [r.status, r.httpStatus])).toEqual([
      ['failed', 429],
      ['failed', 500],
    ]);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    expect(await usageTransactions(f.db, u.id)).toEqual([]);
    expect(await walletRow(f.db, u.id)).toEqual({ balance: 1_000_000_000, allowanceUsed: 0 });
  });

  it('503 when the provider is down, 404 for an unknown provider, 503 for a provider without a key, 402 for an empty wallet', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    f.openai.setMode('down');
    try {
      const res = await post('/external/openai/v1/chat/completions', u.key, JSON.stringify({ model: 'gpt-4o-mini', messages }));
      expect(res.status).toBe(503);
      expect((await res.json()).code).toBe('UPSTREAM_UNREACHABLE');
    } finally {
      f.openai.setMode('ok');
    }
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    const unknown = await post('/external/nosuch/v1/x', u.key, '{}');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe('PROVIDER_NOT_FOUND');
    const proto = await post('/external/constructor/v1/x', u.key, '{}');
    expect(proto.status).toBe(404);
    const keyless = await post('/external/groq/openai/v1/chat/completions', u.key, '{}');
    expect(keyless.status).toBe(503);
    expect((await keyless.json()).code).toBe('PROVIDER_KEY_MISSING');
    const broke = await f.d.user({ tier: 'free' });
    const poor = await post('/external/openai/v1/chat/completions', broke.key, JSON.stringify({ model: 'gpt-4o-mini', messages }));
    expect(poor.status).toBe(402);
    expect(await poor.json()).toMatchObject({ code: 'INSUFFICIENT_FUNDS', details: { balance: 0, currency: 'USD', monthlyAllowance: 0 } });
    const anon = await f.d.fetch('/external/openai/v1/chat/completions', { method: 'POST', json: {} });
    expect(anon.status).toBe(401);
    // a raw request: fetch would normalise the dot segments away before sending
    const dots = await rawPost(`${f.d.api}/external/openai/v1/../%2e%2E/admin`, u.key);
    expect(dots.status).toBe(400);
    expect(JSON.parse(dots.body).code).toBe('INVALID_REQUEST');
  });

  it('GET is forwarded free (no quota, no record, no transaction)', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const res = await f.d.fetch('/external/openai/v1/models', { key: u.key });
    expect(res.status).toBe(200);
    expect((await res.json()).object).toBe('list');
    expect(f.openai.requests.at(-1)!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(await usageRecords(f.db, u.id)).toEqual([]);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
  });
});

describe('proxy: unit-priced providers', () => {
  it('text to speech: priced per character of text, tts quota, binary answer unchanged, xi-api-key auth', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 2 });
    const text = 'Hello from the gateway!';
    const res = await post('/external/elevenlabs/v1/text-to-speech/voice123?output_format=mp3', u.key, JSON.stringify({ text, model_id: 'eleven_multilingual_v2' }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('audio/mpeg');
    expect(res.headers.get('x-upstream-id')).toBe('u-1');
    expect([...new Uint8Array(await res.arrayBuffer())]).toEqual([0xff, 0xfb, 0x90, 0x00, 0x01, 0x02]);
    const seen = audio.seen.at(-1)!;
    expect(seen.url).toBe('/v1/text-to-speech/voice123?output_format=mp3');
    expect(seen.headers['xi-api-key']).toBe('el-key-123');
    expect(seen.headers.authorization).toBeUndefined();
    const cost = Math.round(usdToNano(text.length * 0.0001) * 2);
    expect((await usageRecords(f.db, u.id))[0]).toMatchObject({ status: 'finalized', usageType: 'tts', units: text.length, customer: cost, provider: 'elevenlabs' });
    expect(await quotaUsed(f.db, u.id, 'tts')).toBe(1);
    expect(await usageTransactions(f.db, u.id)).toMatchObject([{ amount: -cost, provider: 'elevenlabs' }]);
  });

  it('sound effects use their own quota; images count num_images; auth header with a prefix', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 2 });
    // (bodies read to the end: the booking is done when the answer is complete)
    const boom = await post('/external/elevenlabs/v1/sound-generation', u.key, JSON.stringify({ text: 'boom' }));
    expect(boom.status).toBe(200);
    await boom.arrayBuffer();
    expect(await quotaUsed(f.db, u.id, 'sound_effect')).toBe(1);
    const cats = await post('/external/fal/fal-ai/flux/dev', u.key, JSON.stringify({ prompt: 'a cat', num_images: 3 }));
    expect(cats.status).toBe(200);
    await cats.arrayBuffer();
    expect(audio.seen.at(-1)!.headers.authorization).toBe('Key fal-key-456');
    const recs = await usageRecords(f.db, u.id);
    expect(recs.map((r) => [r.provider, r.usageType, r.units, r.customer])).toEqual([
      ['elevenlabs', 'sound_effect', 1, Math.round(usdToNano(0.04) * 2)],
      ['fal', 'image_generation', 3, Math.round(usdToNano(3 * 0.025) * 2)],
    ]);
  });
});
