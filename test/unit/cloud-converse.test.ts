import { describe, expect, test } from 'vitest';
import { converseBody } from '../../src/shared/providers/bedrock-converse.js';
import { ConverseStreamToSse, converseToMessages } from '../../src/daemon/gateway/clouds/converse.js';
import { checkConfigValue } from '../../src/shared/config/load.js';
import { resolveConfig } from '../../src/shared/config/resolve.js';
import { findModelPrice } from '../../src/shared/providers/index.js';
import { converseEvent, eventFrame } from '../helpers/cloud-mocks.js';

/**
 * Bedrock's Converse API (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * ContentBlock, ToolConfiguration; streams: API_runtime_ConverseStream.html) for the Bedrock
 * models agw does not call in the messages format, and cloud model ids as alias targets.
 */
describe('a messages-format body as Converse takes it', () => {
  test('system, turns, images, documents, tool calls and results, thinking; inference settings', () => {
    const dropped: string[] = [];
    const body = converseBody(
      {
        model: 'm',
        max_tokens: 100,
        temperature: 0.2,
        top_p: 0.9,
        top_k: 5,
        stop_sequences: ['END'],
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'look' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } }, { type: 'document', title: 'q3 report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } }] },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'boom', is_error: true }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
        ],
        tools: [{ name: 'f', description: 'F', input_schema: { type: 'object', properties: { a: { type: 'number' } } } }, { type: 'web_search_20250305', name: 'web_search' }],
        tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
        metadata: { user_id: 'u' },
      },
      dropped,
    );
    expect(body).toEqual({
      system: [{ text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ text: 'look' }, { image: { format: 'png', source: { bytes: 'iVBOR' } } }, { document: { format: 'pdf', name: 'q3 report pdf', source: { bytes: 'JVBER' } } }] },
        { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'hmm', signature: 'sig' } } }, { toolUse: { toolUseId: 't1', name: 'f', input: { a: 1 } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'boom' }], status: 'error' } }] },
      ],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      toolConfig: { tools: [{ toolSpec: { name: 'f', description: 'F', inputSchema: { json: { type: 'object', properties: { a: { type: 'number' } } } } } }], toolChoice: { tool: { name: 'f' } } },
    });
    expect(dropped).toEqual(['top_k', 'metadata', 'image.source.url', 'tools.web_search_20250305', 'tool_choice.disable_parallel_tool_use']);
  });

  test('tool_choice none has no Converse form: named, the tools kept', () => {
    const dropped: string[] = [];
    const body = converseBody({ messages: [{ role: 'user', content: 'x' }], tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'none' } }, dropped);
    expect(body.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object' } } } }] });
    expect(dropped).toEqual(['tool_choice']);
  });
});

describe('Converse answers in the messages format', () => {
  test('JSON: text, tool use and reasoning; stop reasons; usage with cache reads and writes', () => {
    const out = JSON.parse(
      converseToMessages(
        Buffer.from(
          JSON.stringify({
            output: { message: { role: 'assistant', content: [{ reasoningContent: { reasoningText: { text: 'r', signature: 's' } } }, { text: 'hi' }, { toolUse: { toolUseId: 't', name: 'f', input: { a: 1 } } }] } },
            stopReason: 'tool_use',
            usage: { inputTokens: 5, outputTokens: 3, cacheReadInputTokens: 100, cacheWriteInputTokens: 7 },
          }),
        ),
        'amazon.nova-pro-v1:0',
      ).toString(),
    );
    expect(out).toMatchObject({
      type: 'message',
      model: 'amazon.nova-pro-v1:0',
      content: [{ type: 'thinking', thinking: 'r', signature: 's' }, { type: 'text', text: 'hi' }, { type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 5, output_tokens: 3, cache_read_input_tokens: 100, cache_creation_input_tokens: 7 },
    });
    const filtered = JSON.parse(converseToMessages(Buffer.from(JSON.stringify({ output: { message: { content: [] } }, stopReason: 'guardrail_intervened' })), 'm').toString());
    expect(filtered.stop_reason).toBe('refusal');
  });

  test('stream: events in order, split anywhere; an exception frame becomes an error event', () => {
    const bytes = Buffer.concat([
      converseEvent('messageStart', { role: 'assistant' }),
      converseEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
      converseEvent('contentBlockStop', { contentBlockIndex: 0 }),
      converseEvent('contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't', name: 'f' } } }),
      converseEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"a":' } } }),
      converseEvent('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '1}' } } }),
      converseEvent('contentBlockStop', { contentBlockIndex: 1 }),
      converseEvent('messageStop', { stopReason: 'tool_use' }),
      converseEvent('metadata', { usage: { inputTokens: 9, outputTokens: 4 } }),
    ]);
    const sse = new ConverseStreamToSse('m');
    let text = '';
    for (let i = 0; i < bytes.length; i += 11) text += sse.push(bytes.subarray(i, i + 11));
    text += sse.end();
    const events = text.split('\n\n').filter(Boolean).map((e) => ({ event: e.split('\n')[0].slice(7), data: JSON.parse(e.split('\n')[1].slice(6)) }));
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.find((e) => e.data.content_block?.type === 'tool_use')!.data.content_block).toMatchObject({ id: 't', name: 'f' });
    expect(events.at(-2)!.data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 9, output_tokens: 4 } });
    const err = new ConverseStreamToSse('m').push(eventFrame({ ':message-type': 'exception', ':exception-type': 'throttlingException' }, '{"message":"Too many requests"}'));
    expect(err).toContain('event: error');
    expect(err).toContain('Too many requests');
  });
});

describe('cloud model ids as alias, smart-route and models: entries', () => {
  const resolve = (file: Record<string, unknown>) => {
    expect(checkConfigValue(file)).toEqual([]);
    return resolveConfig(file as never, {});
  };

  test('an inference profile, a dated Vertex id and an Azure snapshot are priced as their catalog rows', () => {
    const r = resolve({
      aliases: { a: [{ provider: 'bedrock', model: 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0' }, { provider: 'vertex', model: 'claude-sonnet-4-5@20250929' }] },
      smartRoutes: { 'best-cheap-llm': [{ provider: 'azure-openai', model: 'gpt-4o-mini-2024-07-18' }, { provider: 'bedrock', model: 'global.anthropic.claude-haiku-4-5-20251001-v1:0' }] },
      models: [{ provider: 'bedrock', model: 'us.amazon.nova-pro-v1:0' }],
    });
    expect(r.problems).toEqual([]);
    const m = (k: string) => r.config.models.get(k)!;
    expect(m('bedrock/eu.anthropic.claude-sonnet-4-5-20250929-v1:0')).toMatchObject({ band: 'pro', inputPer1M: findModelPrice('bedrock', 'anthropic.claude-sonnet-4-5-20250929-v1:0')!.inputPer1M });
    expect(m('vertex/claude-sonnet-4-5@20250929')).toMatchObject({ inputPer1M: 3, outputPer1M: 15 });
    // the longest row: gpt-4o-mini, not gpt-4o
    expect(m('azure-openai/gpt-4o-mini-2024-07-18')).toMatchObject({ inputPer1M: 0.15 });
    // global. is its own, cheaper row
    expect(m('bedrock/global.anthropic.claude-haiku-4-5-20251001-v1:0')).toMatchObject({ inputPer1M: 1 });
    expect(m('bedrock/us.amazon.nova-pro-v1:0')).toMatchObject({ band: 'standard', inputPer1M: 0.8 });
  });

  test('an id no row prices is still an unknown model; other providers are not matched by prefix', () => {
    const r = resolve({ aliases: { a: [{ provider: 'bedrock', model: 'us.deepseek.r1-v1:0' }], b: [{ provider: 'openai', model: 'gpt-4o-mini-2024-07-18' }] } });
    expect(r.problems.map((p) => p.path)).toEqual(['aliases.a.0', 'aliases.b.0']);
  });
});
