import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * The request record names every token class a call used (issues #28, #29): cache writes
 * (5-minute and 1-hour together) and reasoning tokens as the providers report them, JSON and
 * streamed, on both stores. The upstreams answer with the usage shapes of their API
 * references:
 * - Anthropic Messages, usage with cache_creation (https://docs.anthropic.com/en/api/messages,
 *   "usage"; https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching, "1-hour cache
 *   duration"): the probe of issue #29, 100 input, 1,000 cache-write (1 h), 5,000 cache-read, 50
 *   output tokens.
 * - OpenAI Chat Completions, usage.completion_tokens_details.reasoning_tokens
 *   (https://platform.openai.com/docs/api-reference/chat/object, "usage").
 */
const ANTHROPIC_USAGE = {
  input_tokens: 100,
  cache_creation_input_tokens: 1000,
  cache_read_input_tokens: 5000,
  output_tokens: 50,
  cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 1000 },
};
const OPENAI_USAGE = { prompt_tokens: 40, completion_tokens: 300, total_tokens: 340, completion_tokens_details: { reasoning_tokens: 256 } };

function answer(path: string, stream: boolean): { type: string; body: string } {
  if (path.startsWith('/v1/messages')) {
    if (!stream) {
      return {
        type: 'application/json',
        body: JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: ANTHROPIC_USAGE }),
      };
    }
    const ev = (name: string, data: unknown) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
    return {
      type: 'text/event-stream',
      body:
        ev('message_start', { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { ...ANTHROPIC_USAGE, output_tokens: 1 } } }) +
        ev('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
        ev('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }) +
        ev('content_block_stop', { type: 'content_block_stop', index: 0 }) +
        ev('message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 50 } }) +
        ev('message_stop', { type: 'message_stop' }),
    };
  }
  const msg = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'o3-mini' };
  if (!stream) {
    return { type: 'application/json', body: JSON.stringify({ ...msg, choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: OPENAI_USAGE }) };
  }
  const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
  return {
    type: 'text/event-stream',
    body:
      chunk({ ...msg, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' } }] }) +
      chunk({ ...msg, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }) +
      chunk({ ...msg, object: 'chat.completion.chunk', choices: [], usage: OPENAI_USAGE }) +
      'data: [DONE]\n\n',
  };
}

let upstream: Server;
let d: TestDaemon;

beforeAll(async () => {
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const a = answer(req.url ?? '', Boolean(JSON.parse(raw || '{}').stream));
      res.writeHead(200, { 'content-type': a.type });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  d = await startTestDaemon({
    env: { AGW_PROVIDER_ANTHROPIC_BASE_URL: url, AGW_PROVIDER_ANTHROPIC_KEY: 'sk-ant-x', AGW_PROVIDER_OPENAI_BASE_URL: url, AGW_PROVIDER_OPENAI_KEY: 'sk-x' },
  });
});
afterAll(async () => {
  await d?.close();
  await new Promise((r) => upstream?.close(r));
});

async function recordOf(res: Response, key: string) {
  expect(res.status).toBe(200);
  await res.text();
  const r = await d.fetch(`/requests/${res.headers.get('x-request-id')}`, { key });
  return (await r.json()) as Record<string, unknown>;
}

describe('the request record names each token class', () => {
  for (const stream of [false, true]) {
    test(`Anthropic cache writes and reads (${stream ? 'streamed' : 'JSON'})`, async () => {
      const u = await d.user({ tier: 'pro', balance: 5 });
      const res = await d.fetch('/external/anthropic/v1/messages', {
        method: 'POST',
        key: u.key,
        json: { model: 'claude-sonnet-4-5', max_tokens: 100, stream, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(await recordOf(res, u.key)).toMatchObject({
        provider: 'anthropic',
        promptTokens: 6100,
        cachedTokens: 5000,
        cacheWriteTokens: 1000,
        completionTokens: 50,
        reasoningTokens: 0,
        droppedParams: [],
      });
    });

    test(`OpenAI reasoning tokens (${stream ? 'streamed' : 'JSON'})`, async () => {
      const u = await d.user({ tier: 'pro', balance: 5 });
      const res = await d.fetch('/external/openai/v1/chat/completions', {
        method: 'POST',
        key: u.key,
        json: { model: 'o3-mini', stream, messages: [{ role: 'user', content: 'hi' }] },
      });
      expect(await recordOf(res, u.key)).toMatchObject({ promptTokens: 40, completionTokens: 300, reasoningTokens: 256, cacheWriteTokens: 0 });
    });
  }
});
