import { describe, expect, it } from 'vitest';
import { jsonRewriter, StreamRewriter, type AnswerFormat } from '../../src/daemon/gateway/translate/answer.js';
import type { WireFormat } from '../../src/daemon/gateway/translate/neutral.js';
import { common, gemini, messages } from '../helpers/wire-fixtures.js';

/**
 * Streams rewritten between formats, fed one byte at a time (every line and UTF-8
 * sequence split): tool-call arguments arrive complete and in order, each call keyed by
 * its index (common) or its block (messages), stop reason and usage last.
 */
function rewrite(from: WireFormat, to: AnswerFormat, frames: string[], size = 1): string {
  const r = new StreamRewriter(from, to, 'fallback-model');
  const bytes = Buffer.from(frames.join(''));
  let out = '';
  for (let i = 0; i < bytes.length; i += size) out += r.push(bytes.subarray(i, i + size));
  return out + r.end();
}

type Obj = Record<string, any>;
const commonChunks = (text: string): Obj[] =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((f) => f.replace(/^data: /, ''))
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d));
const messagesEvents = (text: string): Obj[] =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((f) => JSON.parse(f.split('\n').find((l) => l.startsWith('data: '))!.slice(6)));

const calls = [
  { id: 'toolu_1', name: 'read', fragments: ['{"path"', ': "a.ts', '", "lines": [1, 2]}'] },
  { id: 'toolu_2', name: 'grep', fragments: ['{"q": "é', 'ü"}'] },
];

describe('messages stream → common chunks', () => {
  it('two tool calls as index-keyed deltas, arguments in order; thinking as reasoning_content; usage last', () => {
    const out = rewrite('messages', 'common', messages.streamToolUse('claude-x', calls, { thinking: { pieces: ['Let me ', 'look.'], signature: 'sig' } }));
    expect(out.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = commonChunks(out);
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(deltas.filter((d) => d.id).map((d) => [d.index, d.id, d.function.name])).toEqual([
      [0, 'toolu_1', 'read'],
      [1, 'toolu_2', 'grep'],
    ]);
    for (const [i, c] of calls.entries()) {
      expect(deltas.filter((d) => d.index === i).map((d) => d.function.arguments).join('')).toBe(c.fragments.join(''));
    }
    expect(chunks.map((c) => c.choices[0]?.delta?.reasoning_content ?? '').join('')).toBe('Let me look.');
    expect(chunks.find((c) => c.choices[0]?.delta?.thinking_blocks)?.choices[0].delta.thinking_blocks).toEqual([{ type: 'thinking', thinking: 'Let me look.', signature: 'sig' }]);
    expect(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 40, completion_tokens: 12 } });
  });

  it('a tool call without arguments still parses: "{}"', () => {
    const chunks = commonChunks(rewrite('messages', 'common', messages.streamToolUse('claude-x', [{ id: 't', name: 'now', fragments: [] }]), 7));
    expect(chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).map((d) => d.function.arguments).join('')).toBe('{}');
  });
});

describe('common chunks → messages stream', () => {
  it('one block per tool call, input_json_delta in order, stop_reason tool_use, usage in message_delta', () => {
    const events = messagesEvents(rewrite('common', 'messages', common.streamToolCalls('gpt-x', calls)));
    expect(events.map((e) => e.type)).toEqual([
      'message_start',
      'content_block_start', ...calls[0].fragments.map(() => 'content_block_delta'), 'content_block_stop',
      'content_block_start', ...calls[1].fragments.map(() => 'content_block_delta'), 'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const starts = events.filter((e) => e.type === 'content_block_start');
    expect(starts.map((e) => [e.index, e.content_block])).toEqual([
      [0, { type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }],
      [1, { type: 'tool_use', id: 'toolu_2', name: 'grep', input: {} }],
    ]);
    for (const [i, c] of calls.entries()) {
      expect(events.filter((e) => e.type === 'content_block_delta' && e.index === i).map((e) => e.delta.partial_json).join('')).toBe(c.fragments.join(''));
    }
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 40, output_tokens: 12 } });
  });

  it('text, however split, comes back whole in one text block', () => {
    const events = messagesEvents(rewrite('common', 'messages', common.streamText('gpt-x', ['Grüße ', 'aus ', '東京'])));
    expect(events.filter((e) => e.type === 'content_block_delta').map((e) => e.delta.text).join('')).toBe('Grüße aus 東京');
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'end_turn' } });
  });
});

describe('Gemini → either format', () => {
  const frames = gemini.stream('gemini-x', [[{ text: 'Hmm.', thought: true }], [{ functionCall: { name: 'read', args: { path: 'a.ts' } }, thoughtSignature: 'g-sig' }]]);

  it('to messages: the signed call rides a thinking block before its tool_use, so it comes back', () => {
    const events = messagesEvents(rewrite('gemini', 'messages', frames, 3));
    const blocks = events.filter((e) => e.type === 'content_block_start').map((e) => e.content_block.type);
    expect(blocks).toEqual(['thinking', 'tool_use']); // the thought and the call's signature in one block
    expect(events.filter((e) => e.delta?.type === 'thinking_delta').map((e) => e.delta.thinking).join('')).toBe('Hmm.');
    expect(events.find((e) => e.delta?.type === 'signature_delta')?.delta.signature).toBe('g-sig');
    expect(events.filter((e) => e.delta?.type === 'input_json_delta').map((e) => e.delta.partial_json).join('')).toBe('{"path":"a.ts"}');
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: 'tool_use' } });
  });

  it('to common: the call with its signature in extra_content', () => {
    const chunks = commonChunks(rewrite('gemini', 'common', frames));
    const start = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []).find((d) => d.id);
    expect(start).toMatchObject({ index: 0, function: { name: 'read' }, extra_content: { google: { thought_signature: 'g-sig' } } });
  });
});

describe('whole answers', () => {
  it('a messages tool_use answer in the common shape, and back', () => {
    const body = Buffer.from(JSON.stringify(messages.toolUse('claude-x', calls, { text: 'Looking.' })));
    const c = JSON.parse(jsonRewriter('messages', 'common', 'm')(body).toString());
    expect(c.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: 'Looking.' } });
    expect(c.choices[0].message.tool_calls.map((t: Obj) => JSON.parse(t.function.arguments))).toEqual(calls.map((x) => JSON.parse(x.fragments.join(''))));
    const back = JSON.parse(jsonRewriter('common', 'messages', 'm')(Buffer.from(JSON.stringify(c))).toString());
    expect(back.content).toEqual([{ type: 'text', text: 'Looking.' }, ...calls.map((x) => ({ type: 'tool_use', id: x.id, name: x.name, input: JSON.parse(x.fragments.join('')) }))]);
    expect(back.stop_reason).toBe('tool_use');
  });
});
