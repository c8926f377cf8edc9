import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { usageRecords, usageTransactions } from '../helpers/gateway-fixture.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { findModelPrice } from '../../src/shared/providers/index.js';
import { tokenCostNano } from '../../src/shared/money.js';

/**
 * A proxied call's hold covers what the provider can charge for it (review H2, H3, H5, M7):
 * whatever output-cap field the provider honours, an output cap the provider does not
 * refuse, prompt content the provider holds or expands. Nothing is written off.
 * Upstreams are scripted with answers in the providers' documented shapes.
 */
let d: TestDaemon;
const up: Record<string, ScriptedUpstream> = {};
const PROVIDERS = ['together', 'mistral', 'openai', 'anthropic', 'google', 'deepseek'] as const;

beforeAll(async () => {
  const env: Record<string, string> = {};
  for (const p of PROVIDERS) {
    up[p] = await startScripted();
    env[`AGW_PROVIDER_${p.toUpperCase()}_BASE_URL`] = up[p].url;
    env[`AGW_PROVIDER_${p.toUpperCase()}_KEY`] = `${p}-test-key-0123456789`;
  }
  d = await startTestDaemon({ env });
});
afterAll(async () => {
  await d?.close();
  await Promise.all(Object.values(up).map((u) => u.close()));
});

/** A chat.completion answer with this usage (https://platform.openai.com/docs/api-reference/chat/object). */
const completion = (model: string, prompt: number, out: number) => ({
  json: {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'length' }],
    usage: { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out },
  },
});

/** Customer nano-USD of `prompt` in / `out` out at margin 2 (no cache). */
const cost = (provider: string, model: string, prompt: number, out: number) => {
  const p = findModelPrice(provider, model)!;
  return Math.round((tokenCostNano(prompt, p.inputPer1M) + tokenCostNano(out, p.outputPer1M)) * 2);
};

async function call(provider: string, path: string, body: Record<string, unknown>, balance = 20) {
  const u = await d.user({ tier: 'enterprise', balance });
  const res = await d.fetch(`/external/${provider}${path}`, { method: 'POST', key: u.key, json: body });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const [rec] = await usageRecords(d.daemon.ctx.db, u.id);
  const [tx] = await usageTransactions(d.daemon.ctx.db, u.id);
  return { rec, tx, u };
}

const messages = [{ role: 'user', content: 'Write a very long story.' }];

describe('H2: the hold reads the largest output cap any field names', () => {
  test('Together honours max_tokens: max_completion_tokens 1 beside max_tokens 32,768 is held for 32,768', async () => {
    const model = 'meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo';
    up.together.queue(completion(model, 20, 32_768));
    const { rec, tx } = await call('together', '/v1/chat/completions', { model, max_completion_tokens: 1, max_tokens: 32_768, messages });
    expect(rec.writtenOff).toBe(0);
    expect(rec.customer).toBe(cost('together', model, 20, 32_768));
    expect(-tx.amount).toBe(rec.customer);
    expect(rec.hold).toBeGreaterThanOrEqual(rec.customer);
  });
});

describe('H3: an output cap the provider does not refuse is held for as asked', () => {
  test('Mistral (takes any max_tokens): 100,000 asked, 100,000 written, nothing written off', async () => {
    up.mistral.queue(completion('mistral-large-latest', 30, 100_000));
    const { rec } = await call('mistral', '/v1/chat/completions', { model: 'mistral-large-latest', max_tokens: 100_000, messages });
    expect(rec.writtenOff).toBe(0);
    expect(rec.customer).toBe(cost('mistral', 'mistral-large-latest', 30, 100_000));
  });

  test('Mistral without a cap writes until the context is full: held for the context window', async () => {
    up.mistral.queue(completion('mistral-large-latest', 30, 100_000));
    const { rec } = await call('mistral', '/v1/chat/completions', { model: 'mistral-large-latest', messages });
    expect(rec.writtenOff).toBe(0);
    expect(rec.customer).toBe(cost('mistral', 'mistral-large-latest', 30, 100_000));
  });

  test('OpenAI refuses a cap above the model’s limit: held for the limit, not for what was asked', async () => {
    up.openai.queue(completion('gpt-4o-mini', 10, 16_384));
    const { rec } = await call('openai', '/v1/chat/completions', { model: 'gpt-4o-mini', max_tokens: 1_000_000, messages });
    expect(rec.writtenOff).toBe(0);
    const p = findModelPrice('openai', 'gpt-4o-mini')!;
    // the limit's 16,384 output tokens, not 1,000,000
    expect(rec.hold).toBeLessThan(Math.round(tokenCostNano(20_000, p.outputPer1M) * 2));
  });

  test('unified chat to a provider without an enforced limit sends the model’s limit as max_tokens when the caller named none', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 20 });
    up.mistral.queue(completion('mistral-large-latest', 10, 5));
    const res = await d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'mistral-large-latest', messages } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(up.mistral.last().max_tokens).toBe(32_768);
  });
});

/** Answers in each provider's documented shape with this usage. */
const gemini = (prompt: number, out: number) => ({ json: { candidates: [{ content: { role: 'model', parts: [{ text: 'x' }] }, finishReason: 'STOP' }], usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: out, totalTokenCount: prompt + out } } });
const message = (model: string, input: number, out: number) => ({ json: { id: 'msg_1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', usage: { input_tokens: input, output_tokens: out } } });
const response = (model: string, input: number, out: number) => ({
  json: { id: 'resp_1', object: 'response', status: 'completed', model, output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'x' }] }], usage: { input_tokens: input, output_tokens: out, total_tokens: input + out } },
});

describe('H5: prompt content the provider holds or expands is held for', () => {
  test('Gemini: a video by fileUri (258 tokens a frame): held at the context window, 600,000 prompt tokens charged in full', async () => {
    up.google.queue(gemini(600_000, 100));
    const body = { contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'video/mp4', fileUri: 'https://www.youtube.com/watch?v=abc' } }, { text: 'Summarise' }] }], generationConfig: { maxOutputTokens: 1000 } };
    const { rec } = await call('google', '/v1beta/models/gemini-2.5-flash:generateContent', body);
    expect(rec.writtenOff).toBe(0);
    expect(rec.prompt).toBe(600_000);
  });

  test('Anthropic: a document by URL; OpenAI: a file by id; Responses: a stored prompt template', async () => {
    up.anthropic.queue(message('claude-sonnet-4-5', 90_000, 50));
    const doc = await call('anthropic', '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }, { type: 'text', text: 'Summarise' }] }] });
    expect(doc.rec.writtenOff).toBe(0);
    up.openai.queue(completion('gpt-4.1', 60_000, 50));
    const file = await call('openai', '/v1/chat/completions', { model: 'gpt-4.1', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }, { type: 'text', text: 'Summarise' }] }] });
    expect(file.rec.writtenOff).toBe(0);
    up.openai.queue(response('gpt-4.1', 30_000, 50));
    const prompt = await call('openai', '/v1/responses', { model: 'gpt-4.1', prompt: { id: 'pmpt_123', version: '2' }, input: 'go', max_output_tokens: 100 });
    expect(prompt.rec.writtenOff).toBe(0);
  });

  test('Responses: an input_image by URL on gpt-4o-mini counts as gpt-4o-mini counts an image (up to 48,169 tokens)', async () => {
    up.openai.queue(response('gpt-4o-mini', 48_200, 20));
    const { rec } = await call('openai', '/v1/responses', { model: 'gpt-4o-mini', max_output_tokens: 100, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/big.png' }, { type: 'input_text', text: 'What is it?' }] }] });
    expect(rec.writtenOff).toBe(0);
  });

  test('a server tool whose results come back as input (Anthropic web fetch): held at the context window', async () => {
    up.anthropic.queue(message('claude-sonnet-4-5', 150_000, 200));
    const { rec } = await call('anthropic', '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 1000, tools: [{ type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 5 }], messages: [{ role: 'user', content: 'Read https://example.com and summarise' }] });
    expect(rec.writtenOff).toBe(0);
  });
});

/** SSE frames of `data:` payloads (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
const sse = (...payloads: unknown[]) => ({ sse: payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`) });
const chunk = (model: string, delta: Record<string, unknown>) => ({ id: 'c', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta, finish_reason: null }] });

async function streamed(provider: string, path: string, body: Record<string, unknown>) {
  const u = await d.user({ tier: 'enterprise', balance: 20 });
  const raw = JSON.stringify(body);
  const res = await d.fetch(`/external/${provider}${path}`, { method: 'POST', key: u.key, headers: { 'content-type': 'application/json' }, body: raw });
  expect(res.status).toBe(200);
  await res.text();
  const [rec] = await usageRecords(d.daemon.ctx.db, u.id);
  return { rec, bytes: Buffer.byteLength(raw) };
}

describe('M7: a stream that ends without its usage is booked at no less than it may have cost', () => {
  test('OpenAI o3 without include_usage: its reasoning is unseen, so the output cap is booked; the prompt at its bound', async () => {
    up.openai.queue(sse(chunk('o3', { role: 'assistant', content: '' }), chunk('o3', { content: 'Yes.' }), '[DONE]'));
    const { rec, bytes } = await streamed('openai', '/v1/chat/completions', { model: 'o3', stream: true, max_completion_tokens: 500, messages: [{ role: 'user', content: 'Think hard: is 7 prime?' }] });
    expect(rec.completion).toBe(500);
    expect(rec.prompt).toBeGreaterThanOrEqual(bytes);
    expect(rec.writtenOff).toBe(0);
  });

  test('DeepSeek’s reasoning_content deltas are counted as output', async () => {
    const thought = 'x'.repeat(4000);
    up.deepseek.queue(sse(chunk('deepseek-reasoner', { role: 'assistant', reasoning_content: thought }), chunk('deepseek-reasoner', { content: 'No.' }), '[DONE]'));
    const { rec } = await streamed('deepseek', '/chat/completions', { model: 'deepseek-reasoner', stream: true, max_tokens: 5000, messages: [{ role: 'user', content: 'Think.' }] });
    expect(rec.completion).toBeGreaterThanOrEqual(1000);
  });

  test('a Responses stream cut before response.completed: an input array and tools are not 0 prompt tokens', async () => {
    up.openai.queue(sse({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress' } }, { type: 'response.output_text.delta', delta: 'Hel' }));
    const input = [{ role: 'user', content: [{ type: 'input_text', text: 'a'.repeat(2000) }] }];
    const tools = [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string', description: 'b'.repeat(1000) } } } }];
    const { rec, bytes } = await streamed('openai', '/v1/responses', { model: 'gpt-4.1', stream: true, max_output_tokens: 100, input, tools });
    expect(rec.prompt).toBeGreaterThanOrEqual(bytes);
  });

  test('Anthropic with thinking: a stream without its message_delta books the output cap (thinking is billed in full, shown summarised)', async () => {
    up.anthropic.queue({
      sse: [
        `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'm', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: { input_tokens: 40, output_tokens: 1 } } })}\n\n`,
        `event: content_block_start\ndata: ${JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } })}\n\n`,
        `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Let me see.' } })}\n\n`,
      ],
    });
    const { rec } = await streamed('anthropic', '/v1/messages', { model: 'claude-sonnet-4-5', stream: true, max_tokens: 3000, thinking: { type: 'enabled', budget_tokens: 2000 }, messages: [{ role: 'user', content: 'Think.' }] });
    expect(rec.prompt).toBe(40);
    expect(rec.completion).toBe(3000);
    expect(rec.writtenOff).toBe(0);
  });
});
