import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/shared/config/load.js';
import { tokenCostNano } from '../../src/shared/money.js';
import { Breaker } from '../../src/daemon/gateway/breaker.js';
import { priceRow, tokenCost } from '../../src/daemon/money/pricing.js';
import { StreamRewriter } from '../../src/daemon/gateway/translate/answer.js';
import { outbound } from '../../src/daemon/gateway/translate/plan.js';
import { SseUsageTap, estimatePromptTokens, usageFromJson } from '../../src/daemon/gateway/usage.js';

/** Feeds `text` to `push` in pieces of `size` bytes (splitting lines and UTF-8 sequences). */
function feed(text: string, size: number, push: (b: Buffer) => unknown): void {
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += size) push(bytes.subarray(i, i + size));
}

const OPENAI_STREAM =
  'data: {"choices":[{"index":0,"delta":{"content":"héllo "}}]}\n\n' +
  'data: {"choices":[{"index":0,"delta":{"content":"wörld \\"quoted\\""}}]}\n\n' +
  'data: {"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19,"prompt_tokens_details":{"cached_tokens":4}}}\n\n' +
  'data: [DONE]\n\n';

const ANTHROPIC_STREAM =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","model":"claude-x","usage":{"input_tokens":20,"cache_read_input_tokens":5,"output_tokens":1}}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Bonjour "}}\n\n' +
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"à tous"}}\n\n' +
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":9}}\n\n' +
  'event: message_stop\ndata: {"type":"message_stop"}\n\n';

/** A whole TokenUsage: the three classes every test names, the others 0 unless given. */
const tu = (prompt: number, completion: number, cached: number, more: { cacheWrite?: number; cacheWrite1h?: number; reasoning?: number } = {}) => ({
  prompt,
  completion,
  cached,
  cacheWrite: 0,
  cacheWrite1h: 0,
  reasoning: 0,
  ...more,
});

describe('usage extraction', () => {
  it('reads JSON usage of every format', () => {
    const j = (o: unknown) => Buffer.from(JSON.stringify(o));
    expect(usageFromJson('openai', j({ usage: { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 2 } } }))).toEqual(tu(10, 5, 2));
    expect(usageFromJson('openai', j({ usage: { input_tokens: 8, output_tokens: 3 } }))).toEqual(tu(8, 3, 0));
    expect(usageFromJson('anthropic', j({ usage: { input_tokens: 10, cache_read_input_tokens: 4, cache_creation_input_tokens: 1, output_tokens: 6 } }))).toEqual(tu(15, 6, 4, { cacheWrite: 1 }));
    // the probe of issue #29: 100 input, 1,000 cache-write (all 1-hour), 5,000 cache-read, 50 output
    const probe = { input_tokens: 100, cache_creation_input_tokens: 1000, cache_read_input_tokens: 5000, output_tokens: 50, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 1000 } };
    expect(usageFromJson('anthropic', j({ usage: probe }))).toEqual(tu(6100, 50, 5000, { cacheWrite: 1000, cacheWrite1h: 1000 }));
    expect(usageFromJson('openai', j({ usage: { prompt_tokens: 10, completion_tokens: 50, completion_tokens_details: { reasoning_tokens: 30 } } }))).toEqual(tu(10, 50, 0, { reasoning: 30 }));
    expect(usageFromJson('openai', j({ response: { usage: { input_tokens: 10, output_tokens: 9, output_tokens_details: { reasoning_tokens: 4 } } } }))).toEqual(tu(10, 9, 0, { reasoning: 4 }));
    expect(usageFromJson('gemini', j({ usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 4, thoughtsTokenCount: 2 } }))).toEqual(tu(9, 6, 0, { reasoning: 2 }));
    expect(usageFromJson('cohere', j({ meta: { billed_units: { input_tokens: 3, output_tokens: 2 } } }))).toEqual(tu(3, 2, 0));
    expect(usageFromJson('openai', Buffer.from('not json'))).toBeUndefined();
    expect(usageFromJson('openai', j({ id: 'x' }))).toBeUndefined();
  });

  for (const size of [1, 3, 7, 64, 10_000]) {
    it(`taps SSE usage however the bytes are split (${size}-byte pieces)`, () => {
      const o = new SseUsageTap('openai');
      feed(OPENAI_STREAM, size, (b) => o.push(b));
      o.end();
      expect(o.usage(999)).toEqual(tu(12, 7, 4));
      const a = new SseUsageTap('anthropic');
      feed(ANTHROPIC_STREAM, size, (b) => a.push(b));
      a.end();
      expect(a.usage(999)).toEqual(tu(25, 9, 5));
    });
  }

  it('estimates when the usage never comes: prompt from the request, completion from the text seen', () => {
    const cut = OPENAI_STREAM.slice(0, OPENAI_STREAM.indexOf('data: {"choices":[],'));
    const o = new SseUsageTap('openai');
    o.push(Buffer.from(cut));
    expect(o.usage(42)).toEqual(tu(42, Math.ceil(('héllo '.length + 'wörld "quoted"'.length) / 4), 0));
    // Anthropic cut after message_start: the real prompt count, the placeholder output replaced by the estimate
    const a = new SseUsageTap('anthropic');
    a.push(Buffer.from(ANTHROPIC_STREAM.slice(0, ANTHROPIC_STREAM.indexOf('event: message_delta'))));
    expect(a.usage(42)).toEqual(tu(25, Math.ceil('Bonjour à tous'.length / 4), 5));
    expect(estimatePromptTokens({ system: 'abcd', messages: [{ content: 'abcdefgh' }, { content: [{ type: 'text', text: 'abc' }] }] })).toBe(1 + 3 + 2 + 3 + 1 + 3);
  });
});

describe('translation', () => {
  const config = loadConfig(undefined, {});
  const to = (provider: string, body: Record<string, unknown>) =>
    outbound({ format: 'common', body }, { provider: config.providers.get(provider)!, model: provider === 'openai' ? 'gpt-x' : 'claude-sonnet-4-5', maxOutput: 64_000 });

  it('common -> messages-style keeps the promised fields and names what it drops', () => {
    const body = {
      model: 'smart-pro',
      messages: [
        { role: 'system' as const, content: 'A' },
        { role: 'user' as const, content: 'q' },
        { role: 'assistant' as const, content: 'a' },
        { role: 'system' as const, content: 'B' },
        { role: 'user' as const, content: 't' },
      ],
      temperature: 0.4,
      stop: 'X',
      logit_bias: { '1': 2 },
      response_format: { type: 'json_object' },
      stream: true,
    };
    const out = to('anthropic', body);
    expect(out.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64_000,
      system: [
        { type: 'text', text: 'A' },
        { type: 'text', text: 'B' },
      ],
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: 'a' },
        { role: 'user', content: 't' },
      ],
      temperature: 0.4,
      stop_sequences: ['X'],
      stream: true,
    });
    expect(out.dropped).toEqual(['logit_bias', 'response_format']);
    expect(to('openai', { ...body, tools: [{}], stream_options: { foo: 1 } }).body).toMatchObject({ model: 'gpt-x', tools: [{}], stream_options: { foo: 1, include_usage: true } });
    expect(to('openai', { model: 'm', messages: [] }).body.stream_options).toBeUndefined();
    expect(to('openai', body).dropped).toEqual([]);
  });

  for (const size of [1, 5, 10_000]) {
    it(`rewrites a messages-style stream into common chunks (${size}-byte pieces)`, () => {
      const t = new StreamRewriter('messages', 'common', 'fallback');
      let out = '';
      feed(ANTHROPIC_STREAM, size, (b) => (out += t.push(b)));
      out += t.end();
      const data = out.split('\n\n').filter(Boolean).map((f) => f.replace(/^data: /, ''));
      expect(data.at(-1)).toBe('[DONE]');
      const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
      expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Bonjour à tous');
      expect(chunks.every((c) => c.id === 'msg_1' && c.model === 'claude-x' && c.object === 'chat.completion.chunk')).toBe(true);
      expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('length');
      expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 25, completion_tokens: 9, total_tokens: 34, prompt_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 } });
    });
  }
});

describe('pricing', () => {
  const config = loadConfig(undefined, {});
  const openai = config.providers.get('openai')!;

  it('prices tokens from the catalog x margin, cached input at the cached rate', () => {
    const c = tokenCost(config, openai, 'gpt-4o-mini', { prompt: 1000, completion: 500, cached: 200, cacheWrite: 0, cacheWrite1h: 0, reasoning: 120 });
    const raw = tokenCostNano(800, 0.15) + tokenCostNano(200, 0.075) + tokenCostNano(500, 0.6);
    expect(c).toEqual({
      model: 'gpt-4o-mini',
      promptTokens: 1000,
      completionTokens: 500,
      cachedTokens: 200,
      cacheWriteTokens: 0,
      cacheWrite1hTokens: 0,
      reasoningTokens: 120,
      tierAbove: 0,
      units: 0,
      rawNano: raw,
      customerNano: Math.round(raw * 2),
    });
  });

  it('dated snapshots match their catalog model; unknown models are charged at the dearest rate', () => {
    expect(priceRow(config, 'openai', 'gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(priceRow(config, 'openai', 'gpt-4o-2024-08-06')?.model).toBe('gpt-4o');
    const unknown = tokenCost(config, openai, 'brand-new-model', { prompt: 1_000_000, completion: 0, cached: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0 });
    expect(unknown.rawNano).toBe(tokenCostNano(1_000_000, 2.5)); // gpt-4o: the dearest input + output
  });
});

describe('circuit breaker', () => {
  it('opens after the threshold, half-opens after the cooldown, closes on success', () => {
    let now = 0;
    const b = new Breaker({ failureThreshold: 3, cooldownMs: 1000 }, () => now);
    b.failure('p');
    b.failure('p');
    expect(b.isOpen('p')).toBe(false);
    b.failure('p');
    expect(b.isOpen('p')).toBe(true);
    now = 1001;
    expect(b.isOpen('p')).toBe(false); // one trial allowed
    b.failure('p');
    expect(b.isOpen('p')).toBe(true); // one more failure reopens at once
    now = 2100;
    b.success('p');
    b.failure('p');
    expect(b.isOpen('p')).toBe(false);
  });
});
