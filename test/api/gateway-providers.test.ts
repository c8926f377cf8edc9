import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayFixture, usageRecords, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { common as commonWire, gemini as geminiWire } from '../helpers/wire-fixtures.js';

/**
 * Issue #28 point 2: every LLM provider of the catalog is an alias target. A third
 * common-format provider (Mistral: its base URL and chat path from the catalog, its own
 * field names) and Google in its own generateContent format (contents/parts,
 * functionDeclarations, functionCall / functionResponse, thinkingConfig, usageMetadata),
 * each a loopback mock answering in its documented format.
 */
const YAML = `
aliases:
  agent-mistral:
    - { provider: mistral, model: mistral-large-latest }
  agent-gemini:
    - { provider: google, model: gemini-2.5-flash }
`;
const MISTRAL_KEY = 'mistral-test-key-0123456789';
const GOOGLE_KEY = 'google-test-key-0123456789';
let f: GatewayFixture;
let mistral: ScriptedUpstream;
let google: ScriptedUpstream;
let u: TestUser;
let client: OpenAI;
beforeAll(async () => {
  mistral = await startScripted();
  google = await startScripted();
  f = await startGatewayFixture({
    yaml: YAML,
    env: { AGW_PROVIDER_MISTRAL_BASE_URL: mistral.url, AGW_PROVIDER_MISTRAL_KEY: MISTRAL_KEY, AGW_PROVIDER_GOOGLE_BASE_URL: google.url, AGW_PROVIDER_GOOGLE_KEY: GOOGLE_KEY },
  });
  u = await f.d.user({ tier: 'pro', balance: 5 });
  client = new OpenAI({ apiKey: u.key, baseURL: `${f.d.api}/gateway/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await f?.close();
  await mistral?.close();
  await google?.close();
});

const tools: OpenAI.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_time', description: 'The time in a zone', parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] } } },
];
const ask: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What time is it in Tokyo?' };

describe('a third common-format provider: Mistral', () => {
  it('is served through an alias at its own chat path with its key; its own field names; what it lacks named', async () => {
    mistral.queue({ json: commonWire.text('mistral-large-latest', 'It is noon.') });
    const { data, response } = await client.chat.completions
      .create({ model: 'agent-mistral', messages: [ask], tools, max_completion_tokens: 300, seed: 3, user: 'u-1' })
      .withResponse();
    expect(response.headers.get('x-service-resolved-provider')).toBe('mistral');
    expect(response.headers.get('x-service-dropped-params')).toBe('user');
    expect(data.choices[0].message.content).toBe('It is noon.');
    const seen = mistral.requests.at(-1)!;
    expect(seen.path).toBe('/v1/chat/completions');
    expect(seen.headers.authorization).toBe(`Bearer ${MISTRAL_KEY}`);
    expect(seen.body).toEqual({ model: 'mistral-large-latest', messages: [ask], stream: false, tools, max_tokens: 300, random_seed: 3 });
    expect((await usageRecords(f.db, u.id)).at(-1)).toMatchObject({ status: 'finalized', provider: 'mistral', model: 'mistral-large-latest', prompt: 20, completion: 5 });
  });
});

describe('Google in its own format', () => {
  it('JSON: the body as generateContent, a functionCall back as a tool call (its thought signature carried), the loop closed with functionResponse', async () => {
    google.queue({ json: geminiWire.functionCall('gemini-2.5-flash', [{ name: 'get_time', args: { zone: 'Asia/Tokyo' }, signature: 'c2lnLTE=' }]) });
    const { data: first, response } = await client.chat.completions
      .create({ model: 'agent-gemini', messages: [{ role: 'system', content: 'Be exact.' }, ask], tools, tool_choice: 'required', reasoning_effort: 'low', max_completion_tokens: 2000 })
      .withResponse();
    expect(response.headers.get('x-service-resolved-provider')).toBe('google');
    const seen = google.requests.at(-1)!;
    expect(seen.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(seen.headers['x-goog-api-key']).toBe(GOOGLE_KEY);
    expect(seen.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'What time is it in Tokyo?' }] }],
      systemInstruction: { parts: [{ text: 'Be exact.' }] },
      tools: [{ functionDeclarations: [{ name: 'get_time', description: 'The time in a zone', parametersJsonSchema: tools[0].function.parameters }] }],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
      generationConfig: { maxOutputTokens: 2000, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } },
    });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageToolCall & { extra_content?: unknown };
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_time', arguments: '{"zone":"Asia/Tokyo"}' }, extra_content: { google: { thought_signature: 'c2lnLTE=' } } });
    // usageMetadata: thoughts are output tokens, and reasoning ones
    expect(first.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 42, completion_tokens_details: { reasoning_tokens: 30 } });
    expect((await usageRecords(f.db, u.id)).at(-1)).toMatchObject({ provider: 'google', model: 'gemini-2.5-flash', prompt: 40, completion: 42 });

    google.queue({ json: geminiWire.text('gemini-2.5-flash', 'It is 21:00 in Tokyo.') });
    const second = await client.chat.completions.create({
      model: 'agent-gemini',
      messages: [ask, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '21:00' }],
      tools,
    });
    expect(second.choices[0].message.content).toBe('It is 21:00 in Tokyo.');
    expect(google.last().contents).toEqual([
      { role: 'user', parts: [{ text: 'What time is it in Tokyo?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_time', args: { zone: 'Asia/Tokyo' } }, thoughtSignature: 'c2lnLTE=' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_time', response: { output: '21:00' } } }] },
    ]);
  });

  it('streamed: streamGenerateContent?alt=sse, a whole function call as one tool-call delta, thoughts as reasoning_content', async () => {
    google.queue({
      sse: geminiWire.stream(
        'gemini-2.5-flash',
        [[{ text: 'Zone first.', thought: true }], [{ functionCall: { name: 'get_time', args: { zone: 'Asia/Tokyo' } } }]],
        { promptTokenCount: 30, candidatesTokenCount: 8, thoughtsTokenCount: 4, totalTokenCount: 42 },
      ),
    });
    const stream = client.chat.completions.stream({ model: 'agent-gemini', messages: [ask], tools });
    let reasoning = '';
    stream.on('chunk', (c) => (reasoning += (c.choices[0]?.delta as { reasoning_content?: string } | undefined)?.reasoning_content ?? ''));
    const done = await stream.finalChatCompletion();
    const seen = google.requests.at(-1)!;
    expect(seen.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(seen.query).toBe('alt=sse');
    expect(reasoning).toBe('Zone first.');
    expect(done.choices[0].finish_reason).toBe('tool_calls');
    expect(done.choices[0].message.tool_calls![0]).toMatchObject({ function: { name: 'get_time', arguments: '{"zone":"Asia/Tokyo"}' } });
    expect((await usageRecords(f.db, u.id)).at(-1)).toMatchObject({ provider: 'google', prompt: 30, completion: 12 });
  });

  it('unified chat without X-Service-Response-Format answers in Google’s own shape', async () => {
    google.queue({ json: geminiWire.text('gemini-2.5-flash', 'Noon.') });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'agent-gemini', messages: [ask] } });
    expect(res.headers.get('x-service-resolved-provider')).toBe('google');
    expect((await res.json()).candidates[0].content.parts[0].text).toBe('Noon.');
  });
});
