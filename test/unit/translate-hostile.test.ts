import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/shared/config/load.js';
import { converseBody } from '../../src/shared/providers/bedrock-converse.js';
import { outbound, type InboundFormat } from '../../src/daemon/gateway/translate/plan.js';
import { imagesOf } from '../../src/daemon/gateway/image-tokens.js';
import { tooDeepField } from '../../src/daemon/gateway/body-depth.js';

/**
 * Review finding M5, the converters' side: the doors refuse hostile bodies first
 * (test/api/hostile-bodies.test.ts), and behind them no converter throws on a null where it
 * reads an object or recurses without bound, whatever reaches it.
 */
const config = loadConfig(undefined, {});
const to = (provider: string, model: string, format: InboundFormat, body: Record<string, unknown>) =>
  outbound({ format, body }, { provider: config.providers.get(provider)!, model, maxOutput: 8192 });

/** `depth` tool_results, each the only block of the one before's content, an image at the bottom. */
function nested(depth: number): Record<string, unknown> {
  let b: Record<string, unknown> = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } };
  for (let i = 0; i < depth; i++) b = { type: 'tool_result', tool_use_id: `t${i}`, content: [b] };
  return b;
}

describe('null where an object is read', () => {
  it('common → messages: thinking_blocks, tool_calls, parts and messages that are null are skipped', () => {
    const out = to('anthropic', 'claude-haiku-4-5', 'common', {
      model: 'x',
      messages: [null, { role: 'user', content: [null, { type: 'text', text: 'hi' }] }, { role: 'assistant', content: 'ok', thinking_blocks: [null], tool_calls: [null] }, { role: 'user', content: 'again' }],
      tools: [null],
    });
    expect(out.body.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'ok' },
      { role: 'user', content: 'again' },
    ]);
  });

  it('messages → common: tool_result content [null], null blocks, messages and tools are skipped', () => {
    const out = to('openai', 'gpt-4o-mini', 'messages', {
      model: 'x',
      max_tokens: 10,
      messages: [null, { role: 'user', content: [null, { type: 'tool_result', tool_use_id: 't', content: [null] }] }],
      tools: [null],
    });
    expect(out.body.messages).toEqual([{ role: 'tool', tool_call_id: 't', content: '' }]);
  });

  it('messages → Converse: tool_result content [null] and null blocks are skipped', () => {
    const body = converseBody({ messages: [null, { role: 'user', content: [null, { type: 'tool_result', tool_use_id: 't', content: [null] }] }], tools: [null] }, []);
    expect(body.messages).toEqual([{ role: 'user', content: [{ toolResult: { toolUseId: 't', content: [{ text: '' }] } }] }]);
  });

  it('a text whose value is not a string is never sent as "[object Object]"', () => {
    const out = to('openai', 'gpt-4o-mini', 'messages', { model: 'x', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'text', text: { a: 1 } }, { type: 'text', text: 'b' }] }] });
    expect(out.text).not.toContain('[object Object]');
  });
});

describe('nesting', () => {
  it('20,000 nested tool_results: converters and the image count read one level of tool_result', () => {
    const body = { model: 'x', max_tokens: 10, messages: [{ role: 'user', content: [nested(20_000)] }] };
    expect(() => converseBody(body, [])).not.toThrow();
    expect(imagesOf('messages', body)).toEqual([]);
    const out = messagesToCommon(body);
    expect(out).toEqual([{ role: 'tool', tool_call_id: 't19999', content: '' }]);
  });

  it('tooDeepField names the top-level field nesting past the limit, in one pass without recursion', () => {
    expect(tooDeepField({ a: 1, b: { c: [[{}]] } })).toBeUndefined();
    expect(tooDeepField({ a: [[1]], b: [[[[1]]]] }, 3)).toBe('b');
    expect(tooDeepField({ a: [[1]], b: [[[1]]] }, 3)).toBeUndefined();
    let deep: unknown = [];
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(tooDeepField({ ok: 'x', x: deep })).toBe('x');
  });
});

function messagesToCommon(body: Record<string, unknown>): unknown {
  return to('openai', 'gpt-4o-mini', 'messages', body).body.messages;
}
