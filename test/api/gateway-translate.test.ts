import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaUsed, startGatewayFixture, usageRecords, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { common as commonWire, messages as anthropicWire } from '../helpers/wire-fixtures.js';
import { findModelPrice } from '../../src/shared/providers/index.js';

/** A 1 MB screenshot's hold at most: (1,600 image tokens + 200 of text) × $6/M + 100 × $15/M, × 2 margin, in nano-USD. */
const HOLD_BOUND = ((1600 + 200) * 6 + 100 * 15) * 2 * 1000;

/**
 * Issue #28 on unified chat and the smart route: images reach a messages-format upstream as
 * image blocks and are held by their pixels; what a provider cannot honour is named
 * (X-Service-Dropped-Params) or, strict, refused before the upstream and free; the smart
 * route tries candidates that honour everything first; reasoning_effort becomes extended
 * thinking; an assistant turn with content null is accepted on every target.
 */
const YAML = `
aliases:
  agent-claude:
    - { provider: anthropic, model: claude-sonnet-4-5 }
  agent-gpt:
    - { provider: openai, model: gpt-4.1 }
smartRoutes:
  best-quality-llm:
    - { provider: anthropic, model: claude-sonnet-4-5 }
    - { provider: openai, model: gpt-4o-mini }
  best-fast-llm:
    - { provider: anthropic, model: claude-haiku-4-5 }
`;
let f: GatewayFixture;
let oai: ScriptedUpstream;
let anth: ScriptedUpstream;
let u: TestUser;
beforeAll(async () => {
  oai = await startScripted();
  anth = await startScripted();
  f = await startGatewayFixture({ yaml: YAML, env: { AGW_PROVIDER_OPENAI_BASE_URL: oai.url, AGW_PROVIDER_ANTHROPIC_BASE_URL: anth.url } });
  u = await f.d.user({ tier: 'pro', balance: 5 });
});
afterAll(async () => {
  await f?.close();
  await oai?.close();
  await anth?.close();
});

const chat = (json: Record<string, unknown>, headers: Record<string, string> = {}, key = u.key) => f.d.fetch('/gateway/chat', { method: 'POST', key, json, headers });
const smart = (json: Record<string, unknown>, headers: Record<string, string> = {}) =>
  f.d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json, headers });

/** A PNG's first bytes (signature and IHDR) for a w × h image, padded to `bytes`: all a size reader needs. */
function png(w: number, h: number, bytes = 64): string {
  const b = Buffer.alloc(Math.max(bytes, 33));
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
  b.writeUInt32BE(13, 8);
  b.write('IHDR', 12, 'latin1');
  b.writeUInt32BE(w, 16);
  b.writeUInt32BE(h, 20);
  return b.toString('base64');
}

describe('images', () => {
  it('reach the messages-format upstream as image blocks (base64 from data:, url from https:)', async () => {
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', 'A cat.') });
    const data = png(64, 48);
    const res = await chat({
      model: 'agent-claude',
      max_tokens: 50,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in these?' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
          ],
        },
      ],
    });
    expect(res.status).toBe(200);
    expect(anth.last().messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ]);
  });

  it('a 1 MB screenshot is held for its pixels, not its base64 bytes: admitted on a 10-cent wallet', async () => {
    expect(findModelPrice('anthropic', 'claude-sonnet-4-5')?.cacheWrite1hPer1M).toBe(6);
    const poor = await f.d.user({ tier: 'team', balance: 0.1 });
    const screenshot = png(2880, 1800, 1_000_000); // a Retina screenshot's size, 1 MB
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', 'A terminal.', { input_tokens: 1600, output_tokens: 4 }) });
    const res = await chat({ model: 'agent-claude', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${screenshot}` } }] }] }, {}, poor.key);
    expect(res.status).toBe(200);
    const rec = (await usageRecords(f.db, poor.id)).at(-1)!;
    // held: at most 1,600 image tokens + the body's text (< 200 bytes) at the dearest input-side
    // class the model has (1-hour cache writes, $6/M: CONTRACT third round, "Exact cost for every
    // token class", since the cost branch #29) and 100 output tokens at $15/M, × 2; by its base64
    // bytes (~250,000 tokens) it would be held $3 and refused on this wallet
    expect(rec.hold).toBeLessThan(HOLD_BOUND);
    expect(rec.hold).toBeGreaterThan(1600 * 3 * 2 * 1000);
  });
});

describe('images through the proxy', () => {
  it('are held by their pixels too, in the provider’s own format', async () => {
    const poor = await f.d.user({ tier: 'team', balance: 0.1 });
    const screenshot = png(2880, 1800, 1_000_000);
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', 'A terminal.', { input_tokens: 1600, output_tokens: 4 }) });
    const res = await f.d.fetch('/external/anthropic/v1/messages', {
      method: 'POST',
      key: poor.key,
      json: { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: screenshot } }] }] },
    });
    expect(res.status).toBe(200);
    expect((await usageRecords(f.db, poor.id)).at(-1)!.hold).toBeLessThan(HOLD_BOUND);
  });
});

describe('dropped and strict', () => {
  const body = { model: 'agent-claude', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], logprobs: true, seed: 7, response_format: { type: 'json_object' } };

  it('a field the resolved provider cannot honour is dropped and named in X-Service-Dropped-Params', async () => {
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', '{}') });
    const res = await chat(body);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-dropped-params')).toBe('logprobs,seed,response_format');
    expect(anth.last()).toEqual({ model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
  });

  it('a dropped name that is no header token (the caller’s own key) is percent-encoded, the answer whole (from a review: it was a 500 after the charge)', async () => {
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', '{}') });
    const res = await chat({ model: 'agent-claude', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }], 'x€': 1, 'a,b': 2 });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-dropped-params')).toBe('x%E2%82%AC,a%2Cb');
    expect((await res.json()).content).toBeDefined();
    const rec = await (await f.d.fetch(`/requests/${res.headers.get('x-request-id')}`, { key: u.key })).json();
    expect(rec.droppedParams).toEqual(['x€', 'a,b']);
  });

  it('with X-Service-Strict-Params: 1 it is refused: 400 UNSUPPORTED_PARAMETER before the upstream, free', async () => {
    const v = await f.d.user({ tier: 'pro', balance: 1 });
    const sent = anth.requests.length;
    const res = await chat(body, { 'x-service-strict-params': '1' }, v.key);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_PARAMETER', details: { parameter: 'logprobs', provider: 'anthropic' } });
    expect(anth.requests.length).toBe(sent);
    expect(await quotaUsed(f.db, v.id)).toBe(0);
    expect(await usageRecords(f.db, v.id, { refused: true })).toEqual([]);
    expect((await walletRow(f.db, v.id)).balance).toBe(1_000_000_000);
    // what a provider does honour passes strict mode
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', 'ok') });
    expect((await chat({ ...body, logprobs: undefined, seed: undefined, response_format: undefined }, { 'x-service-strict-params': '1' }, v.key)).status).toBe(200);
  });

  it('the smart route tries the candidates that honour every field first; strict, only them', async () => {
    oai.queue({ json: commonWire.text('gpt-4o-mini', '{"ok":true}') });
    const json = { model: 'best-quality-llm', messages: [{ role: 'user', content: 'JSON please' }], response_format: { type: 'json_object' } };
    const res = await smart(json);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-smart-route-provider')).toBe('openai'); // premium-first order would have picked anthropic
    expect(res.headers.get('x-service-dropped-params')).toBe('');
    // when the one that honours it all fails, the next serves and says what it dropped
    oai.queue({ status: 500, json: { error: { message: 'boom', type: 'server_error' } } });
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', '{"ok":true}') });
    const failed = await smart(json);
    expect(failed.headers.get('x-smart-route-provider')).toBe('anthropic');
    expect(failed.headers.get('x-service-dropped-params')).toBe('response_format');
    // strict, with no candidate that can honour it: refused, nothing sent
    const sent = anth.requests.length;
    const strict = await smart({ ...json, model: 'best-fast-llm' }, { 'x-service-strict-params': '1' });
    expect(strict.status).toBe(400);
    expect(await strict.json()).toMatchObject({ code: 'UNSUPPORTED_PARAMETER', details: { parameter: 'response_format', provider: 'anthropic' } });
    expect(anth.requests.length).toBe(sent);
  });
});

describe('agent turns', () => {
  const tools = [{ type: 'function', function: { name: 'ls', parameters: { type: 'object', properties: {} } } }];
  const loop = [
    { role: 'user', content: 'List the files.' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: 'README.md' },
  ];

  it('an assistant turn with content null and tool_calls is accepted on the common-format provider too, and passed as it is', async () => {
    oai.queue({ json: commonWire.text('gpt-4.1', 'One file: README.md.') });
    const res = await chat({ model: 'agent-gpt', messages: loop, tools });
    expect(res.status).toBe(200);
    expect(oai.last().messages).toEqual(loop);
  });

  it('reasoning_effort becomes extended thinking; the thinking comes back as reasoning_content and signed thinking_blocks', async () => {
    anth.queue({ json: anthropicWire.toolUse('claude-sonnet-4-5', [{ id: 'toolu_1', name: 'ls', fragments: ['{}'] }], { thinking: { text: 'I should list.', signature: 'sig-1' } }) });
    const res = await chat({ model: 'agent-claude', messages: loop.slice(0, 1), tools, reasoning_effort: 'low', max_completion_tokens: 4000, temperature: 0.2 }, { 'x-service-response-format': 'openai' });
    expect(res.headers.get('x-service-dropped-params')).toBe('temperature'); // thinking allows no temperature
    expect(anth.last()).toMatchObject({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(anth.last().temperature).toBeUndefined();
    const message = (await res.json()).choices[0].message;
    expect(message).toMatchObject({ content: null, reasoning_content: 'I should list.', thinking_blocks: [{ type: 'thinking', thinking: 'I should list.', signature: 'sig-1' }] });

    // the loop goes on with the message as it came: its signed thinking leads the assistant turn
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', 'README.md') });
    await chat({ model: 'agent-claude', messages: [loop[0], message, { role: 'tool', tool_call_id: 'toolu_1', content: 'README.md' }], tools, reasoning_effort: 'low', max_completion_tokens: 4000 });
    expect(anth.last().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect((anth.last().messages as { content: unknown }[])[1].content).toEqual([
      { type: 'thinking', thinking: 'I should list.', signature: 'sig-1' },
      { type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} },
    ]);

    // a tool turn continued without its thinking cannot think: thinking is off for that call, and named
    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', 'README.md') });
    const bare = await chat({ model: 'agent-claude', messages: loop, tools, reasoning_effort: 'low', max_completion_tokens: 4000 });
    expect(bare.headers.get('x-service-dropped-params')).toBe('reasoning_effort');
    expect(anth.last().thinking).toBeUndefined();
  });

  it('X-Service-Response-Format: anthropic answers in the Messages shape whatever served it, streamed too', async () => {
    oai.queue({ json: commonWire.toolCalls('gpt-4.1', [{ id: 'call_9', name: 'ls', fragments: ['{}'] }]) });
    const res = await chat({ model: 'agent-gpt', messages: loop.slice(0, 1), tools }, { 'x-service-response-format': 'anthropic' });
    expect(await res.json()).toMatchObject({ type: 'message', stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'call_9', name: 'ls', input: {} }] });
    oai.queue({ sse: commonWire.streamText('gpt-4.1', ['Hello', ' there']) });
    const s = await chat({ model: 'agent-gpt', messages: loop.slice(0, 1), stream: true }, { 'x-service-response-format': 'anthropic' });
    const text = await s.text();
    expect(s.headers.get('content-type')).toContain('text/event-stream');
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
  });
});
