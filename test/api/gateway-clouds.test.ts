import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { expectedCostNano, usageTransactions } from '../helpers/gateway-fixture.js';
import { sigV4Problem, sigV4Scope } from '../helpers/cloud-mocks.js';
import { AWS, AZ_KEY, converseStream, invokeChunks, startClouds, type Clouds } from '../helpers/cloud-scripted.js';
import { common, gemini, messages } from '../helpers/wire-fixtures.js';

/**
 * Issue #30 item 5 (CONTRACT "Cloud providers", "Every LLM provider is a target"):
 * azure-openai, bedrock and vertex as alias targets of unified chat (its three doors) and as
 * smart-route candidates, JSON and streamed, against loopback clouds that check the api-key,
 * the SigV4 signature and the OAuth token as the clouds do (test/helpers/cloud-scripted.ts).
 * Each answer says which cloud served it; usage and cost are booked from the catalog row
 * of the model (a cloud's own id, e.g. an inference profile's, priced as its catalog row).
 */
const HAIKU = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const aliases = `
aliases:
  az-mini: [ { provider: azure-openai, model: gpt-4o-mini } ]
  bedrock-claude: [ { provider: bedrock, model: '${HAIKU}' } ]
  bedrock-nova: [ { provider: bedrock, model: 'amazon.nova-lite-v1:0' } ]
  vertex-claude: [ { provider: vertex, model: 'claude-sonnet-4-5@20250929' } ]
  vertex-gemini: [ { provider: vertex, model: gemini-2.5-flash } ]
smartRoutes:
  best-cheap-llm:
    - { provider: bedrock, model: '${HAIKU}' }
    - { provider: vertex, model: gemini-2.5-flash }
    - { provider: azure-openai, model: gpt-4o-mini }
`;

let c: Clouds;
let d: TestDaemon;
beforeAll(async () => {
  c = await startClouds();
  d = await startTestDaemon({ yaml: c.yaml + aliases });
});
afterAll(async () => {
  await d?.close();
  await c?.close();
});

const post = (path: string, key: string, body: unknown, headers: Record<string, string> = {}) => d.fetch(path, { method: 'POST', key, json: body, headers });
async function record(res: Response, key: string) {
  const r = await d.fetch(`/requests/${res.headers.get('x-request-id')}`, { key });
  expect(r.status).toBe(200);
  return (await r.json()) as Record<string, unknown>;
}
/** The data: payloads of an SSE body. */
const dataOf = (text: string) => text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
const chunks = (text: string) => dataOf(text).filter((x) => x !== '[DONE]').map((x) => JSON.parse(x) as Record<string, any>);
const streamedText = (text: string) => chunks(text).map((x) => x.choices?.[0]?.delta?.content ?? '').join('');
const hi = (n: string) => ({ role: 'user', content: `Hello ${n}` });

describe('azure-openai as an alias target', () => {
  test('/gateway/chat (JSON) and /gateway/v1/chat/completions (streamed): the deployment, api-version and api-key; cost from the catalog', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    c.queue.azure.push({ json: common.text('gpt-4o-mini-2024-07-18', 'Hello from Azure', { prompt_tokens: 12, completion_tokens: 7 }) });
    const res = await post('/gateway/chat', u.key, { model: 'az-mini', messages: [hi('azure')] });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-service-resolved-provider')).toBe('azure-openai');
    expect(res.headers.get('x-service-resolved-model')).toBe('gpt-4o-mini');
    expect((await res.json()).choices[0].message.content).toBe('Hello from Azure');
    const s = c.last('azure');
    expect(s.url).toBe('/openai/deployments/chat-mini/chat/completions?api-version=2024-10-21');
    expect(s.headers['api-key']).toBe(AZ_KEY);
    expect(s.json.messages).toEqual([hi('azure')]);
    expect(await record(res, u.key)).toMatchObject({ provider: 'azure-openai', model: 'gpt-4o-mini', alias: 'az-mini', promptTokens: 12, completionTokens: 7 });

    c.queue.azure.push({ sse: common.streamText('gpt-4o-mini-2024-07-18', ['Str', 'eam'], { prompt_tokens: 10, completion_tokens: 2 }) });
    const st = await post('/gateway/v1/chat/completions', u.key, { model: 'az-mini', stream: true, messages: [hi('azure stream')] });
    expect(st.headers.get('content-type')).toContain('text/event-stream');
    expect(streamedText(await st.text())).toBe('Stream');
    expect(c.last('azure').json).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(await record(st, u.key)).toMatchObject({ provider: 'azure-openai', promptTokens: 10, completionTokens: 2, stream: true });
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([
      -expectedCostNano('azure-openai', 'gpt-4o-mini', 12, 7),
      -expectedCostNano('azure-openai', 'gpt-4o-mini', 10, 2),
    ]);
  });
});

describe('bedrock as an alias target', () => {
  test('Claude through InvokeModel: signed, anthropic_version in the body, what Bedrock does not take dropped and named; the inference profile priced as its model', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    c.queue.bedrock.push({ json: messages.text('claude-haiku-4-5-20251001', 'Hi from Bedrock', { input_tokens: 30, output_tokens: 9 }) });
    const res = await post(
      '/gateway/v1/messages',
      u.key,
      { model: 'bedrock-claude', max_tokens: 200, messages: [hi('bedrock')], metadata: { user_id: 'u-1' } },
      { 'anthropic-beta': 'fine-grained-tool-streaming-2025-05-14' },
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-service-resolved-provider')).toBe('bedrock');
    expect(res.headers.get('x-service-dropped-params')).toBe('metadata');
    expect(await res.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hi from Bedrock' }] });
    const s = c.last('bedrock');
    expect(s.url).toBe('/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/invoke');
    expect(sigV4Problem(s, AWS.secretAccessKey)).toBeNull();
    expect(sigV4Scope(s)).toEqual({ accessKeyId: AWS.accessKeyId, region: 'us-west-2', service: 'bedrock' });
    expect(s.json).toEqual({ anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['fine-grained-tool-streaming-2025-05-14'], max_tokens: 200, messages: [hi('bedrock')] });
    expect(await record(res, u.key)).toMatchObject({ provider: 'bedrock', model: HAIKU, promptTokens: 30, completionTokens: 9 });
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([-expectedCostNano('bedrock', 'anthropic.claude-haiku-4-5-20251001-v1:0', 30, 9)]);
  });

  test('Claude streamed: the AWS event stream becomes the messages SSE, then the common one; usage off the stream', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    c.queue.bedrock.push({ frames: invokeChunks(messages.streamText('claude-haiku-4-5-20251001', ['Hel', 'lo'], { input_tokens: 25, output_tokens: 4 })) });
    const res = await post('/gateway/v1/chat/completions', u.key, { model: 'bedrock-claude', stream: true, messages: [hi('stream')] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    expect(streamedText(text)).toBe('Hello');
    expect(chunks(text).at(-1)!.usage).toMatchObject({ prompt_tokens: 25, completion_tokens: 4 });
    expect(dataOf(text).at(-1)).toBe('[DONE]');
    expect(c.last('bedrock').url).toBe('/model/us.anthropic.claude-haiku-4-5-20251001-v1%3A0/invoke-with-response-stream');
    expect(c.last('bedrock').json.stream).toBeUndefined();
    expect(await record(res, u.key)).toMatchObject({ provider: 'bedrock', promptTokens: 25, completionTokens: 4 });

    // the messages door gets the messages events themselves
    c.queue.bedrock.push({ frames: invokeChunks(messages.streamText('claude-haiku-4-5-20251001', ['Hey'], { input_tokens: 8, output_tokens: 1 })) });
    const m = await post('/gateway/v1/messages', u.key, { model: 'bedrock-claude', max_tokens: 50, stream: true, messages: [hi('messages stream')] });
    const events = (await m.text()).split('\n').filter((l) => l.startsWith('event: ')).map((l) => l.slice(7));
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([
      -expectedCostNano('bedrock', 'anthropic.claude-haiku-4-5-20251001-v1:0', 25, 4),
      -expectedCostNano('bedrock', 'anthropic.claude-haiku-4-5-20251001-v1:0', 8, 1),
    ]);
  });

  test('another model (Nova) through Converse, JSON and streamed', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    c.queue.bedrock.push({ json: { output: { message: { role: 'assistant', content: [{ text: 'Hello from Nova' }] } }, stopReason: 'end_turn', usage: { inputTokens: 14, outputTokens: 6, totalTokens: 20 }, metrics: { latencyMs: 9 } } });
    const res = await post('/gateway/chat', u.key, { model: 'bedrock-nova', max_tokens: 100, temperature: 0.5, messages: [{ role: 'system', content: 'Be brief.' }, hi('nova')] });
    expect(res.status, await res.clone().text()).toBe(200);
    // the provider's own shape for a Bedrock model is the messages format's
    expect(await res.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'Hello from Nova' }], stop_reason: 'end_turn', usage: { input_tokens: 14, output_tokens: 6 } });
    const s = c.last('bedrock');
    expect(s.url).toBe('/model/amazon.nova-lite-v1%3A0/converse');
    expect(s.json).toEqual({ messages: [{ role: 'user', content: [{ text: 'Hello nova' }] }], system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 100, temperature: 0.5 } });

    c.queue.bedrock.push({ frames: converseStream({ text: ['No', 'va'], usage: { inputTokens: 11, outputTokens: 3 } }) });
    const st = await post('/gateway/v1/chat/completions', u.key, { model: 'bedrock-nova', stream: true, messages: [hi('nova stream')] });
    const text = await st.text();
    expect(streamedText(text)).toBe('Nova');
    expect(chunks(text).at(-1)!.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 3 });
    expect(c.last('bedrock').url).toBe('/model/amazon.nova-lite-v1%3A0/converse-stream');
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([
      -expectedCostNano('bedrock', 'amazon.nova-lite-v1:0', 14, 6),
      -expectedCostNano('bedrock', 'amazon.nova-lite-v1:0', 11, 3),
    ]);
  });

  test('count_tokens on the messages base URL: the gateway’s estimate, free, nothing sent to the cloud', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const before = c.bedrock.seen.length;
    const res = await post('/gateway/v1/messages/count_tokens', u.key, { model: 'bedrock-claude', messages: [hi('count these tokens please')] });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await res.json()).input_tokens).toBeGreaterThan(3);
    expect(c.bedrock.seen.length).toBe(before);
    expect(await usageTransactions(d.daemon.ctx.db, u.id)).toEqual([]);
  });

  test('strict mode refuses what Bedrock cannot take, before anything is sent or charged', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const before = c.bedrock.seen.length;
    const res = await post('/gateway/chat', u.key, { model: 'bedrock-claude', user: 'u-7', messages: [hi('strict')] }, { 'x-service-strict-params': '1' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'UNSUPPORTED_PARAMETER', details: { provider: 'bedrock', parameters: ['metadata'] } });
    expect(c.bedrock.seen.length).toBe(before);
    expect(await usageTransactions(d.daemon.ctx.db, u.id)).toEqual([]);
  });
});

describe('vertex as an alias target', () => {
  test('Claude by rawPredict (JSON, common answer) and streamRawPredict (the messages door), with the service account’s token', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    c.queue.vertex.push({ json: messages.text('claude-sonnet-4-5', 'Hi from Vertex', { input_tokens: 21, output_tokens: 8 }) });
    const res = await post('/gateway/v1/chat/completions', u.key, { model: 'vertex-claude', messages: [hi('vertex')] });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-service-resolved-provider')).toBe('vertex');
    expect(await res.json()).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'Hi from Vertex' } }], usage: { prompt_tokens: 21, completion_tokens: 8 } });
    const s = c.last('vertex');
    expect(s.url).toBe('/v1/projects/agw-test-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5%4020250929:rawPredict');
    expect(s.headers.authorization).toBe(`Bearer ${c.tokens.at(-1)}`);
    expect(s.json).toMatchObject({ anthropic_version: 'vertex-2023-10-16', messages: [hi('vertex')] });
    expect(s.json.model).toBeUndefined();

    c.queue.vertex.push({ sse: messages.streamText('claude-sonnet-4-5', ['Ver', 'tex'], { input_tokens: 9, output_tokens: 2 }) });
    const st = await post('/gateway/v1/messages', u.key, { model: 'vertex-claude', max_tokens: 64, stream: true, messages: [hi('vertex stream')] });
    expect(await st.text()).toContain('"text":"tex"');
    expect(c.last('vertex').url).toMatch(/:streamRawPredict$/);
    expect(c.last('vertex').json).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true, max_tokens: 64 });
    expect(await record(st, u.key)).toMatchObject({ provider: 'vertex', model: 'claude-sonnet-4-5@20250929', promptTokens: 9, completionTokens: 2 });
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([
      -expectedCostNano('vertex', 'claude-sonnet-4-5', 21, 8),
      -expectedCostNano('vertex', 'claude-sonnet-4-5', 9, 2),
    ]);
  });

  test('Gemini by generateContent (its own shape on /gateway/chat) and streamGenerateContent?alt=sse', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    c.queue.vertex.push({ json: gemini.text('gemini-2.5-flash', 'Hi from Gemini', { promptTokenCount: 13, candidatesTokenCount: 4, totalTokenCount: 17 }) });
    const res = await post('/gateway/chat', u.key, { model: 'vertex-gemini', messages: [hi('gemini')] });
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await res.json()).candidates[0].content.parts[0].text).toBe('Hi from Gemini');
    expect(c.last('vertex').url).toBe('/v1/projects/agw-test-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(c.last('vertex').json.contents).toEqual([{ role: 'user', parts: [{ text: 'Hello gemini' }] }]);

    c.queue.vertex.push({ sse: gemini.stream('gemini-2.5-flash', [[{ text: 'Gem' }], [{ text: 'ini' }]], { promptTokenCount: 7, candidatesTokenCount: 2, totalTokenCount: 9 }) });
    const st = await post('/gateway/v1/chat/completions', u.key, { model: 'vertex-gemini', stream: true, messages: [hi('gemini stream')] });
    expect(streamedText(await st.text())).toBe('Gemini');
    expect(c.last('vertex').url).toBe('/v1/projects/agw-test-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([
      -expectedCostNano('vertex', 'gemini-2.5-flash', 13, 4),
      -expectedCostNano('vertex', 'gemini-2.5-flash', 7, 2),
    ]);
  });
});

describe('the clouds on the smart route', () => {
  const smart = (key: string, n: string, stream = false) => post('/external/smart/v1/chat/completions', key, { model: 'best-cheap-llm', stream, messages: [hi(`smart ${n}`)] });
  const limited = { json: { error: { code: '429', message: 'Rate limit is exceeded.' } }, status: 429 };

  test('cheapest first (azure), failing over to vertex, then bedrock; JSON and streamed; each booked at the cloud that answered', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    c.queue.azure.push({ json: common.text('gpt-4o-mini', 'az', { prompt_tokens: 5, completion_tokens: 1 }) });
    const a = await smart(u.key, 'a');
    expect(a.headers.get('x-smart-route-provider')).toBe('azure-openai');
    c.queue.azure.push({ sse: common.streamText('gpt-4o-mini', ['a', 'z'], { prompt_tokens: 5, completion_tokens: 2 }) });
    expect(streamedText(await (await smart(u.key, 'b', true)).text())).toBe('az');

    c.queue.azure.push(limited);
    c.queue.vertex.push({ json: gemini.text('gemini-2.5-flash', 'gem', { promptTokenCount: 6, candidatesTokenCount: 1, totalTokenCount: 7 }) });
    const v = await smart(u.key, 'c');
    expect(v.headers.get('x-smart-route-provider')).toBe('vertex');
    expect((await v.json()).choices[0].message.content).toBe('gem');
    c.queue.azure.push(limited);
    c.queue.vertex.push({ sse: gemini.stream('gemini-2.5-flash', [[{ text: 'g' }], [{ text: 'em' }]], { promptTokenCount: 6, candidatesTokenCount: 2, totalTokenCount: 8 }) });
    expect(streamedText(await (await smart(u.key, 'd', true)).text())).toBe('gem');

    c.queue.azure.push(limited);
    c.queue.vertex.push(limited);
    c.queue.bedrock.push({ json: messages.text('claude-haiku-4-5', 'bed', { input_tokens: 7, output_tokens: 1 }) });
    const b = await smart(u.key, 'e');
    expect(b.headers.get('x-smart-route-provider')).toBe('bedrock');
    expect(sigV4Problem(c.bedrock.seen.at(-1)!, AWS.secretAccessKey)).toBeNull();
    expect((await b.json()).choices[0].message.content).toBe('bed');
    expect(await record(b, u.key)).toMatchObject({ provider: 'bedrock', model: HAIKU, attempts: 3 });
    c.queue.azure.push(limited);
    c.queue.vertex.push(limited);
    c.queue.bedrock.push({ frames: invokeChunks(messages.streamText('claude-haiku-4-5', ['b', 'ed'], { input_tokens: 7, output_tokens: 2 })) });
    const bs = await smart(u.key, 'f', true);
    expect(bs.headers.get('content-type')).toContain('text/event-stream');
    expect(streamedText(await bs.text())).toBe('bed');

    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => [t.provider, t.amount])).toEqual([
      ['azure-openai', -expectedCostNano('azure-openai', 'gpt-4o-mini', 5, 1)],
      ['azure-openai', -expectedCostNano('azure-openai', 'gpt-4o-mini', 5, 2)],
      ['vertex', -expectedCostNano('vertex', 'gemini-2.5-flash', 6, 1)],
      ['vertex', -expectedCostNano('vertex', 'gemini-2.5-flash', 6, 2)],
      ['bedrock', -expectedCostNano('bedrock', 'anthropic.claude-haiku-4-5-20251001-v1:0', 7, 1)],
      ['bedrock', -expectedCostNano('bedrock', 'anthropic.claude-haiku-4-5-20251001-v1:0', 7, 2)],
    ]);
  });
});

describe('secrets', () => {
  test('a cloud that echoes its credentials in an error: the key, the signature and the token are redacted', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const echoed = async (alias: string, cloud: 'azure' | 'bedrock' | 'vertex') => {
      c.queue[cloud].push({ echo: true });
      const res = await post('/gateway/chat', u.key, { model: alias, messages: [hi(`echo ${alias}`)] });
      expect(res.status).toBe(400);
      const text = await res.text();
      expect(text).toContain('[redacted]');
      return text;
    };
    expect(await echoed('az-mini', 'azure')).not.toContain(AZ_KEY);
    const b = await echoed('bedrock-claude', 'bedrock');
    const signature = /Signature=([0-9a-f]{64})/.exec(String(c.bedrock.seen.at(-1)!.headers.authorization))![1];
    expect(b).not.toContain(signature);
    const v = await echoed('vertex-claude', 'vertex');
    for (const t of c.tokens) expect(v).not.toContain(t);
    expect(await usageTransactions(d.daemon.ctx.db, u.id)).toEqual([]);
  });
});

describe('the alias catalog', () => {
  test('unified chat serves the clouds; their models are no longer proxy-only', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const a = await (await d.fetch('/gateway/aliases', { key: u.key })).json();
    expect(a.unifiedChatProviders).toEqual(expect.arrayContaining(['azure-openai', 'bedrock', 'vertex']));
    expect(a.proxyModels.filter((m: { provider: string }) => ['azure-openai', 'bedrock', 'vertex'].includes(m.provider))).toEqual([]);
    expect(a.allowedModels).toContainEqual({ provider: 'bedrock', model: HAIKU, band: 'standard' });
    expect(a.smartRouteProviderOrder).toEqual(['azure-openai', 'vertex', 'bedrock']);
  });
});
