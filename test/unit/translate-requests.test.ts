import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/shared/config/load.js';
import { outbound, type InboundFormat } from '../../src/daemon/gateway/translate/plan.js';

/** Request translation, format to format, as each provider's API reference lays out its body. */
const config = loadConfig(undefined, {});
const to = (provider: string, model: string, format: InboundFormat, body: Record<string, unknown>, extra: { betas?: string } = {}) =>
  outbound({ format, body, ...extra }, { provider: config.providers.get(provider)!, model, maxOutput: config.models.get(`${provider}/${model}`)?.maxOutputTokens ?? 32_768 });

const png = 'iVBORw0KGgo=';

describe('messages → common', () => {
  it('tool results become tool messages (consecutive ones too); an image in a tool result follows as a user message', () => {
    const out = to('openai', 'gpt-4.1', 'messages', {
      model: 'x',
      max_tokens: 100,
      system: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: 'Look at both.' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'tool_use', id: 'a', name: 'shot', input: {} }, { type: 'tool_use', id: 'b', name: 'cat', input: { f: 1 } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'a', content: [{ type: 'text', text: 'here' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }] },
            { type: 'tool_result', tool_use_id: 'b', content: 'file', is_error: true },
            { type: 'text', text: 'Now?' },
          ],
        },
      ],
      thinking: { type: 'enabled', budget_tokens: 10_000 },
      top_k: 5,
    });
    expect(out.body.messages).toEqual([
      { role: 'system', content: 'S' },
      { role: 'user', content: 'Look at both.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'shot', arguments: '{}' } }, { id: 'b', type: 'function', function: { name: 'cat', arguments: '{"f":1}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'here' },
      { role: 'tool', tool_call_id: 'b', content: 'file' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }, { type: 'text', text: 'Now?' }] },
    ]);
    // gpt-4.1 does not reason; top_k and cache_control have no place in the common format
    expect(out.dropped).toEqual(['cache_control', 'top_k', 'thinking']);
    expect(out.body.reasoning_effort).toBeUndefined();
    // o3 reasons: a 10,000-token budget is "medium"
    expect(to('openai', 'o3', 'messages', { model: 'x', messages: [{ role: 'user', content: 'q' }], thinking: { type: 'enabled', budget_tokens: 10_000 } }).body.reasoning_effort).toBe('medium');
  });
});

describe('messages → messages', () => {
  it('passes the caller’s body with the concrete model, the output cap and system turns moved to system', () => {
    const body = { model: 'alias', max_tokens: 500_000, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'text', text: 'q', cache_control: { type: 'ephemeral' } }] }], thinking: { type: 'adaptive' } };
    const out = to('anthropic', 'claude-sonnet-4-5', 'messages', body, { betas: 'a-beta' });
    expect(out.body).toEqual({ ...body, model: 'claude-sonnet-4-5', max_tokens: 64_000, system: [{ type: 'text', text: 'Be brief.' }], messages: [body.messages[1]] });
    expect(out.headers).toEqual({ 'anthropic-beta': 'a-beta' });
    expect(out.dropped).toEqual([]);
    expect(to('anthropic', 'claude-sonnet-4-5', 'messages', { model: 'a', messages: [{ role: 'user', content: 'q' }] }).body.max_tokens).toBe(64_000);
  });
});

describe('common → messages', () => {
  it('json_schema becomes output_config.format where the model has structured outputs; else it is named', () => {
    const rf = { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object', properties: { a: { type: 'string' } } } } };
    const b = { model: 'x', messages: [{ role: 'user', content: 'q' }], response_format: rf };
    expect(to('anthropic', 'claude-sonnet-4-5', 'common', b).body.output_config).toEqual({ format: { type: 'json_schema', schema: rf.json_schema.schema } });
    expect(to('anthropic', 'claude-3-5-haiku-latest', 'common', b).dropped).toEqual(['response_format']);
  });

  it('thinking fits under max_tokens (≥ 1,024), never with a forced tool; tool_choice and parallel_tool_calls map to tool_choice', () => {
    const b = { model: 'x', messages: [{ role: 'user', content: 'q' }], reasoning_effort: 'high', max_tokens: 5000 };
    expect(to('anthropic', 'claude-sonnet-4-5', 'common', b).body.thinking).toEqual({ type: 'enabled', budget_tokens: 4999 });
    expect(to('anthropic', 'claude-sonnet-4-5', 'common', { ...b, max_tokens: 1000 }).dropped).toEqual(['reasoning_effort']);
    expect(to('anthropic', 'claude-3-5-haiku-latest', 'common', b).dropped).toEqual(['reasoning_effort']);
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const forced = to('anthropic', 'claude-sonnet-4-5', 'common', { ...b, tools, tool_choice: { type: 'function', function: { name: 'f' } }, parallel_tool_calls: false });
    expect(forced.body.tool_choice).toEqual({ type: 'tool', name: 'f', disable_parallel_tool_use: true });
    expect(forced.body.thinking).toBeUndefined();
    expect(forced.dropped).toEqual(['reasoning_effort']);
    expect(to('anthropic', 'claude-sonnet-4-5', 'common', { ...b, tools, tool_choice: 'required' }).body.tool_choice).toEqual({ type: 'any' });
    expect(to('anthropic', 'claude-sonnet-4-5', 'common', { ...b, tools, tool_choice: 'none' }).body.tool_choice).toEqual({ type: 'none' });
  });

  it('fields a client sends as null are not set: nothing is named as dropped', () => {
    const b = { model: 'x', messages: [{ role: 'user', content: 'q' }], tools: null, tool_choice: null, response_format: null, reasoning_effort: null, logprobs: null, parallel_tool_calls: null };
    expect(to('anthropic', 'claude-sonnet-4-5', 'common', b).dropped).toEqual([]);
    expect(to('mistral', 'mistral-large-latest', 'common', { ...b, user: null }).dropped).toEqual([]);
  });

  it('tool-call arguments that are not a JSON object are the caller’s error (400), not a silent {}', () => {
    const b = { model: 'x', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }] };
    expect(() => to('anthropic', 'claude-sonnet-4-5', 'common', b)).toThrow(/not a JSON object/);
  });
});

describe('→ Gemini', () => {
  it('a signed thought carried back on the first function call of its turn; a placeholder for Gemini 3 when there is none', () => {
    const turn = (sig?: string) => ({
      model: 'x',
      messages: [
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [...(sig ? [{ type: 'thinking', thinking: '', signature: sig }] : []), { type: 'tool_use', id: 'c1', name: 'f', input: { a: 1 } }, { type: 'tool_use', id: 'c2', name: 'g', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'one' }, { type: 'tool_result', tool_use_id: 'c2', content: 'two', is_error: true }] },
      ],
    });
    const out = to('google', 'gemini-2.5-flash', 'messages', turn('s1'));
    expect(out.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'q' }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 's1' }, { functionCall: { name: 'g', args: {} } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { output: 'one' } } }, { functionResponse: { name: 'g', response: { error: 'two' } } }] },
    ]);
    expect(out.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    const g3 = to('google', 'gemini-3-pro-preview', 'messages', { ...turn(), stream: true });
    expect((g3.body.contents as { parts: Record<string, unknown>[] }[])[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
    expect([g3.path, g3.query]).toEqual(['/v1beta/models/gemini-3-pro-preview:streamGenerateContent', 'alt=sse']);
  });

  it('response_format as responseMimeType / responseJsonSchema; what Gemini lacks is named', () => {
    const out = to('google', 'gemini-2.5-flash', 'common', {
      model: 'x',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'q' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
      response_format: { type: 'json_schema', json_schema: { name: 'r', schema: { type: 'object' } } },
      user: 'u',
      logprobs: true,
      seed: 1,
    });
    expect(out.body.generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: { type: 'object' }, seed: 1 });
    expect((out.body.contents as { parts: unknown[] }[])[0].parts[1]).toEqual({ fileData: { mimeType: 'image/png', fileUri: 'https://example.com/a.png' } });
    expect(out.dropped).toEqual(['logprobs', 'user']);
  });
});
