import { describe, expect, test } from 'vitest';
import { getProvider, type CloudSettings } from '../../src/shared/providers/index.js';
import { EventStreamDecoder, EventStreamToSse, EventStreamUsageTap } from '../../src/daemon/gateway/clouds/eventstream.js';
import { eventFrame } from '../helpers/cloud-mocks.js';

/**
 * The cloud providers as alias / smart-route targets: given a body in one of the
 * gateway's chat formats and a model, each builds the request the cloud takes
 * (Azure: https://learn.microsoft.com/azure/ai-services/openai/reference; Anthropic on
 * Bedrock: https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-anthropic-claude-messages-request-response.html;
 * Vertex: https://docs.claude.com/en/api/claude-on-vertex-ai and the generateContent reference).
 */
const settings: CloudSettings = { deployments: { 'gpt-4o': 'prod-4o' }, apiVersion: '2024-10-21', region: 'us-east-1', project: 'p1', location: 'global' };
const build = (id: string, format: 'common' | 'messages' | 'gemini', body: Record<string, unknown>, model: string) => getProvider(id)!.chatUpstream!(format, body, model, settings);

describe('chat-format requests for the clouds', () => {
  test('azure-openai: a common body to its deployment with the api-version; other formats are not taken', () => {
    const r = build('azure-openai', 'common', { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true }, 'gpt-4o')!;
    expect(r).toMatchObject({ path: '/openai/deployments/prod-4o/chat/completions', query: 'api-version=2024-10-21', usageFormat: 'openai', eventStream: false });
    expect(r.headers.accept).toBe('text/event-stream');
    expect(build('azure-openai', 'messages', {}, 'gpt-4o')).toBeUndefined();
  });

  test('bedrock: a messages body for an Anthropic model through InvokeModel, with anthropic_version, the model in the path and no stream field', () => {
    const body = { model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true, system: 's' };
    const r = build('bedrock', 'messages', body, 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')!;
    expect(r.path).toBe('/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream');
    expect(r.eventStream).toBe(true);
    expect(r.headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(JSON.parse(r.body)).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, messages: body.messages, system: 's' });
    expect(build('bedrock', 'messages', { ...body, stream: false }, 'anthropic.claude-haiku-4-5-20251001-v1:0')!.path).toBe('/model/anthropic.claude-haiku-4-5-20251001-v1%3A0/invoke');
    expect(build('bedrock', 'common', body, 'anthropic.claude-haiku-4-5-20251001-v1:0')).toBeUndefined();
  });

  test('bedrock: what InvokeModel does not take is left out and named; betas go in the body', () => {
    const body = { model: 'x', max_tokens: 10, messages: [], metadata: { user_id: 'u' }, service_tier: 'auto', output_config: {}, thinking: { type: 'enabled', budget_tokens: 2000 } };
    const r = getProvider('bedrock')!.chatUpstream!('messages', body, 'anthropic.claude-sonnet-4-5-20250929-v1:0', settings, { 'anthropic-beta': 'a-1, b-2' })!;
    expect(JSON.parse(r.body)).toEqual({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['a-1', 'b-2'], max_tokens: 10, messages: [], thinking: body.thinking });
    expect(r.dropped).toEqual(['metadata', 'service_tier', 'output_config']);
  });

  test('bedrock: any other model through Converse (converse / converse-stream), its answer marked for conversion', () => {
    const r = build('bedrock', 'messages', { model: 'x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }], stream: true }, 'amazon.nova-pro-v1:0')!;
    expect(r).toMatchObject({ path: '/model/amazon.nova-pro-v1%3A0/converse-stream', usageFormat: 'bedrock', eventStream: true, answer: 'converse', dropped: [] });
    expect(JSON.parse(r.body)).toEqual({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: 10 } });
  });

  test('the chat API each cloud model is called in', () => {
    const api = (id: string, model: string) => getProvider(id)!.chatFor!(model);
    expect(api('azure-openai', 'gpt-4o')).toMatchObject({ format: 'common' });
    expect(api('bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toMatchObject({ format: 'messages' });
    expect(api('bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')!.reasoningModels!.test('us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(true);
    expect(api('bedrock', 'meta.llama3-3-70b-instruct-v1:0')!.reasoningModels!.test('meta.llama3-3-70b-instruct-v1:0')).toBe(false);
    expect(api('vertex', 'claude-haiku-4-5@20251001')).toMatchObject({ format: 'messages' });
    expect(api('vertex', 'gemini-2.5-pro')).toMatchObject({ format: 'gemini' });
  });

  test('vertex: Claude by rawPredict / streamRawPredict with vertex’s anthropic_version, Gemini by generateContent / streamGenerateContent?alt=sse', () => {
    const claude = build('vertex', 'messages', { model: 'm', max_tokens: 5, messages: [], stream: true }, 'claude-sonnet-4-5@20250929')!;
    expect(claude.path).toBe('/v1/projects/p1/locations/global/publishers/anthropic/models/claude-sonnet-4-5%4020250929:streamRawPredict');
    expect(JSON.parse(claude.body)).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 5, messages: [], stream: true });
    const gemini = build('vertex', 'gemini', { contents: [], stream: true }, 'gemini-2.5-flash')!;
    expect(gemini).toMatchObject({ path: '/v1/projects/p1/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent', query: 'alt=sse' });
    expect(JSON.parse(gemini.body)).toEqual({ contents: [] });
    expect(build('vertex', 'gemini', {}, 'claude-sonnet-4-5@20250929')).toBeUndefined();
    expect(build('vertex', 'common', {}, 'gemini-2.5-flash')).toBeUndefined();
  });
});

describe('AWS event streams', () => {
  const chunk = (event: unknown) =>
    eventFrame({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify({ bytes: Buffer.from(JSON.stringify(event)).toString('base64') }));
  const stream = Buffer.concat([
    chunk({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 21, output_tokens: 1 } } }),
    chunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }),
    chunk({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 9 } }),
    chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 21, outputTokenCount: 9 } }),
  ]);

  test('frames split anywhere decode the same; InvokeModel chunks become the messages format’s SSE', () => {
    const sse = new EventStreamToSse();
    let out = '';
    for (let i = 0; i < stream.length; i += 7) out += sse.push(stream.subarray(i, i + 7));
    const events = out.split('\n\n').filter(Boolean);
    expect(events.map((e) => e.split('\n')[0])).toEqual(['event: message_start', 'event: content_block_delta', 'event: message_delta', 'event: message_stop']);
    expect(JSON.parse(events[1].split('\n')[1].slice(6)).delta.text).toBe('Hi');
    const err = new EventStreamToSse().push(eventFrame({ ':message-type': 'exception', ':exception-type': 'throttlingException' }, '{"message":"slow down"}'));
    expect(err).toContain('event: error');
    expect(err).toContain('throttlingException');
  });

  test('usage read off the stream: the final counts, not message_start’s placeholder; a garbage stream decodes to nothing', () => {
    const tap = new EventStreamUsageTap('bedrock');
    tap.push(stream.subarray(0, 50));
    tap.push(stream.subarray(50));
    tap.end();
    expect(tap.usage(0)).toMatchObject({ prompt: 21, completion: 9 });
    expect(new EventStreamDecoder().push(Buffer.from('not an event stream at all'))).toEqual([]);
  });
});
