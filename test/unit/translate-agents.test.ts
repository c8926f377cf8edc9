import { describe, expect, it } from 'vitest';
import { answerRewriters, jsonRewriter, StreamRewriter } from '../../src/daemon/gateway/translate/answer.js';
import { outbound } from '../../src/daemon/gateway/translate/plan.js';
import { loadConfig } from '../../src/shared/config/load.js';
import { loadJson, loadSse } from '../conformance/load.js';
import { ssePayloads } from '../conformance/read.js';

/**
 * What the conformance suite and real clients (Claude Code through /api/gateway) found after
 * the translate branch, each replayed from a fixture written from the provider's reference
 * (test/conformance/fixtures/, which cite their pages): usage a provider reports under its
 * own names reaches the caller, a messages-format caller reads its own field names in
 * X-Service-Dropped-Params, and a messages-format output cap never exceeds the target
 * model's limit.
 */
type Obj = Record<string, any>;
const config = loadConfig(undefined, {});
const to = (provider: string, model: string, body: Obj) =>
  outbound({ format: 'messages', body }, { provider: config.providers.get(provider)!, model, maxOutput: config.models.get(`${provider}/${model}`)!.maxOutputTokens! });

/** A stream pushed through `r` a few bytes at a time (events cut anywhere). */
function feed(r: { push(b: Buffer): string; end(): string }, wire: string, size = 7): string {
  const bytes = Buffer.from(wire);
  let out = '';
  for (let i = 0; i < bytes.length; i += size) out += r.push(bytes.subarray(i, i + size));
  return out + r.end();
}

describe('usage under a provider’s own names', () => {
  it('DeepSeek’s prompt_cache_hit_tokens are the messages shape’s cache_read_input_tokens (JSON and streamed)', () => {
    const json = loadJson('deepseek/chat-answer-text.json');
    const a = JSON.parse(jsonRewriter('common', 'messages', 'deepseek-chat')(Buffer.from(JSON.stringify(json.body))).toString()) as Obj;
    // 1,040 prompt tokens of which 1,024 were cache hits: 16 uncached + 1,024 read
    expect(a.usage).toEqual({ input_tokens: 16, cache_read_input_tokens: 1024, cache_creation_input_tokens: 0, output_tokens: 12 });
    const sse = loadSse('deepseek/chat-stream-tool-calls.sse.txt');
    const events = ssePayloads(feed(new StreamRewriter('common', 'messages', 'deepseek-chat'), sse.wire)) as Obj[];
    expect(events.find((e) => e.type === 'message_delta')!.usage).toEqual({ input_tokens: 70, cache_read_input_tokens: 128, cache_creation_input_tokens: 0, output_tokens: 22 });
  });

  it('Groq’s streamed usage in x_groq.usage reaches a messages-format caller', () => {
    const sse = loadSse('groq/chat-stream-text.sse.txt');
    const events = ssePayloads(feed(new StreamRewriter('common', 'messages', 'llama-3.3-70b-versatile'), sse.wire)) as Obj[];
    expect(events.find((e) => e.type === 'message_delta')!.usage).toMatchObject({ input_tokens: 44, output_tokens: 12 });
  });

  it('a common-shape caller gets DeepSeek’s cache hits in prompt_tokens_details.cached_tokens, the rest unchanged', () => {
    const field = config.providers.get('deepseek')!.def.chat!.cachedTokensField;
    expect(field).toBe('prompt_cache_hit_tokens');
    const rw = answerRewriters('common', 'common', 'deepseek-chat', field);
    const json = loadJson('deepseek/chat-answer-text.json');
    const out = JSON.parse(rw.json!(Buffer.from(JSON.stringify(json.body))).toString()) as Obj;
    expect(out).toEqual({ ...json.body, usage: { ...(json.body.usage as Obj), prompt_tokens_details: { cached_tokens: 1024 } } });
    const sse = loadSse('deepseek/chat-stream-tool-calls.sse.txt');
    const streamed = feed(rw.sse!(), sse.wire);
    const payloads = ssePayloads(streamed);
    // every event as it came but the usage chunk, which gains cached_tokens; [DONE] kept
    expect(payloads.slice(0, -2)).toEqual(sse.payloads.slice(0, -2));
    expect((payloads.at(-2) as Obj).usage).toEqual({ ...(sse.payloads.at(-2) as Obj).usage, prompt_tokens_details: { cached_tokens: 128 } });
    expect(payloads.at(-1)).toBe('[DONE]');
    // an answer without the field passes as the same bytes
    const plain = Buffer.from(JSON.stringify(loadJson('openai/chat-answer-text.json').body));
    expect(rw.json!(plain)).toBe(plain);
  });
});

describe('a messages-format caller reads its own field names in X-Service-Dropped-Params', () => {
  it('disable_parallel_tool_use and metadata.user_id, not parallel_tool_calls and user (DeepSeek takes neither)', () => {
    const req = loadJson('anthropic/request-disable-parallel-tool-use.json').body;
    const out = to('deepseek', 'deepseek-chat', { ...req, metadata: { user_id: 'u-1' } });
    expect(out.body.parallel_tool_calls).toBeUndefined();
    expect(out.body.user).toBeUndefined();
    expect(out.dropped).toEqual(['disable_parallel_tool_use', 'metadata.user_id']);
  });

  it('Claude Code’s adaptive thinking with output_config.effort, to a model that does not reason: both named', () => {
    const body = { model: 'x', max_tokens: 32_000, messages: [{ role: 'user', content: 'q' }], thinking: { type: 'adaptive' }, output_config: { effort: 'high' } };
    const out = to('openai', 'gpt-4o-mini', body);
    expect(out.body.reasoning_effort).toBeUndefined();
    expect(out.dropped).toEqual(['thinking', 'output_config.effort']);
    // to a model that reasons, the effort is carried
    expect(to('openai', 'o3', body).body.reasoning_effort).toBe('high');
  });

  it('a json_schema output format to DeepSeek (JSON mode only) is named as the caller sent it', () => {
    const body = { model: 'x', max_tokens: 100, messages: [{ role: 'user', content: 'q' }], output_config: { format: { type: 'json_schema', schema: { type: 'object' } } } };
    const out = to('deepseek', 'deepseek-chat', body);
    expect(out.body.response_format).toEqual({ type: 'json_object' });
    expect(out.dropped).toEqual(['output_config.format']);
  });
});

describe('a common-format caller’s tool loop', () => {
  it('a `name` on a tool message (LangChain sends the tool’s) is not named as dropped: tool_call_id carries it; a participant name is', () => {
    const body = loadJson('openai/request-tool-result-turn.json').body as Obj;
    const messages = (body.messages as Obj[]).map((m) => (m.role === 'tool' ? { ...m, name: 'get_weather' } : m));
    const common = (b: Obj) => outbound({ format: 'common', body: b }, { provider: config.providers.get('anthropic')!, model: 'claude-sonnet-4-5', maxOutput: 64_000 });
    const out = common({ ...body, messages });
    expect(out.dropped).toEqual([]);
    expect(JSON.stringify(out.body.messages)).toContain('"tool_result"');
    expect(common({ ...body, messages: [{ ...messages[0], name: 'alice' }, ...messages.slice(1)] }).dropped).toEqual(['messages.name']);
  });
});

describe('the output cap, at most the target model’s limit', () => {
  it('is at most the common-format model’s limit (Claude Code sends max_tokens: 32000; gpt-4o-mini writes at most 16,384)', () => {
    const body = { model: 'x', max_tokens: 32_000, messages: [{ role: 'user', content: 'q' }] };
    expect(to('openai', 'gpt-4o-mini', body).body.max_completion_tokens).toBe(16_384);
    expect(to('openai', 'gpt-4o-mini', { ...body, max_tokens: 100 }).body.max_completion_tokens).toBe(100);
    // DeepSeek takes max_tokens (renamed), capped the same way
    expect(to('deepseek', 'deepseek-chat', body).body).toMatchObject({ max_tokens: 8_000 });
  });

  it('a common-format caller’s cap too (an agent asks every model behind an alias for 128000)', () => {
    const common = (provider: string, model: string, b: Obj) =>
      outbound({ format: 'common', body: b }, { provider: config.providers.get(provider)!, model, maxOutput: config.models.get(`${provider}/${model}`)!.maxOutputTokens! }).body;
    const body = { model: 'alias', messages: [{ role: 'user', content: 'q' }] };
    expect(common('openai', 'gpt-4o-mini', { ...body, max_completion_tokens: 128_000 }).max_completion_tokens).toBe(16_384);
    expect(common('openai', 'gpt-4o-mini', { ...body, max_tokens: 100 }).max_tokens).toBe(100);
    expect(common('deepseek', 'deepseek-chat', { ...body, max_completion_tokens: 128_000 })).toMatchObject({ max_tokens: 8_000 });
  });
});
