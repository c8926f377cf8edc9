import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { expectedCostNano, usageTransactions } from '../helpers/gateway-fixture.js';
import { sigV4Problem } from '../helpers/cloud-mocks.js';
import { AWS, converseStream, invokeChunks, startClouds, type Clouds } from '../helpers/cloud-scripted.js';
import { messages as anthropicWire } from '../helpers/wire-fixtures.js';
import type { TestUser } from '../helpers/daemon.js';

/**
 * Issue #30 item 5: the official `openai` SDK against agw's OpenAI-compatible base URL
 * ({base_url}/gateway/v1) runs an agent's tool call through aliases to Claude on Bedrock
 * (InvokeModel, signed with SigV4) and on Vertex (rawPredict, an OAuth token), and to a
 * Converse model on Bedrock; the clouds are loopback stand-ins that check the credentials
 * (test/helpers/cloud-scripted.ts).
 */
const aliases = `
aliases:
  bedrock-claude: [ { provider: bedrock, model: 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0' } ]
  vertex-claude: [ { provider: vertex, model: 'claude-haiku-4-5@20251001' } ]
  bedrock-nova: [ { provider: bedrock, model: 'amazon.nova-pro-v1:0' } ]
`;
let c: Clouds;
let d: TestDaemon;
let u: TestUser;
let client: OpenAI;
beforeAll(async () => {
  c = await startClouds();
  d = await startTestDaemon({ yaml: c.yaml + aliases });
  u = await d.user({ tier: 'pro', balance: 5 });
  client = new OpenAI({ apiKey: u.key, baseURL: `${d.api}/gateway/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await d?.close();
  await c?.close();
});

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  },
];
const anthropicTools = [{ name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };
const call = { id: 'toolu_01B7cloudsTool', name: 'get_weather', fragments: ['{"city": ', '"Paris"}'] };
const result = '{"temp": 21}';

describe('the openai SDK through aliases to Claude on the clouds', () => {
  it('bedrock-claude: a tool call (JSON), the tool result back, the final answer; signed and booked at Bedrock', async () => {
    c.queue.bedrock.push({ json: anthropicWire.toolUse('claude-sonnet-4-5-20250929', [call], { usage: { input_tokens: 40, output_tokens: 12 } }) });
    const { data: first, response } = await client.chat.completions.create({ model: 'bedrock-claude', messages: [question], tools, max_completion_tokens: 300 }).withResponse();
    expect(response.headers.get('x-service-resolved-provider')).toBe('bedrock');
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.tool_calls).toEqual([{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    const s = c.last('bedrock');
    expect(s.url).toBe('/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke');
    expect(sigV4Problem(s, AWS.secretAccessKey)).toBeNull();
    expect(s.json).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 300, messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools: anthropicTools });

    c.queue.bedrock.push({ json: anthropicWire.text('claude-sonnet-4-5-20250929', 'It is 21 °C in Paris.', { input_tokens: 60, output_tokens: 9 }) });
    const second = await client.chat.completions.create({
      model: 'bedrock-claude',
      messages: [question, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: result }],
      tools,
      max_completion_tokens: 300,
    });
    expect(second.choices[0].message.content).toBe('It is 21 °C in Paris.');
    expect(c.last('bedrock').json.messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: result }] },
    ]);
    const row = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).slice(-2).map((t) => [t.provider, t.amount])).toEqual([
      ['bedrock', -expectedCostNano('bedrock', row, 40, 12)],
      ['bedrock', -expectedCostNano('bedrock', row, 60, 9)],
    ]);
  });

  it('bedrock-claude streamed: the tool call assembled from the converted event stream', async () => {
    c.queue.bedrock.push({ frames: invokeChunks(anthropicWire.streamToolUse('claude-sonnet-4-5-20250929', [call])) });
    const stream = client.chat.completions.stream({ model: 'bedrock-claude', messages: [question], tools, max_completion_tokens: 300 });
    const done = await stream.finalChatCompletion();
    expect(done.choices[0].finish_reason).toBe('tool_calls');
    expect(done.choices[0].message.tool_calls![0]).toMatchObject({ id: call.id, function: { name: 'get_weather', arguments: '{"city": "Paris"}' } });
    expect(done.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 12 });
    expect(c.last('bedrock').url).toMatch(/\/invoke-with-response-stream$/);
  });

  it('vertex-claude: a tool call (JSON) with the service account’s token', async () => {
    c.queue.vertex.push({ json: anthropicWire.toolUse('claude-haiku-4-5', [call], { text: 'Checking.' }) });
    const first = await client.chat.completions.create({ model: 'vertex-claude', messages: [question], tools, tool_choice: 'required' });
    expect(first.choices[0].message).toMatchObject({ content: 'Checking.', tool_calls: [{ id: call.id, function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] });
    const s = c.last('vertex');
    expect(s.url).toBe('/v1/projects/agw-test-project/locations/us-east5/publishers/anthropic/models/claude-haiku-4-5%4020251001:rawPredict');
    expect(s.headers.authorization).toBe(`Bearer ${c.tokens.at(-1)}`);
    expect(s.json).toMatchObject({ anthropic_version: 'vertex-2023-10-16', tools: anthropicTools, tool_choice: { type: 'any' } });
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).at(-1)).toMatchObject({ provider: 'vertex', amount: -expectedCostNano('vertex', 'claude-haiku-4-5', 40, 12) });
  });

  it('bedrock-nova: a tool call through Converse (toolConfig out, toolUse back), JSON and streamed', async () => {
    c.queue.bedrock.push({
      json: {
        output: { message: { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_nova1', name: 'get_weather', input: { city: 'Paris' } } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 30, outputTokens: 10, totalTokens: 40 },
      },
    });
    const first = await client.chat.completions.create({ model: 'bedrock-nova', messages: [question], tools });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.tool_calls).toEqual([{ id: 'tooluse_nova1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);
    expect(c.last('bedrock').json.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'get_weather', description: 'The weather in a city', inputSchema: { json: anthropicTools[0].input_schema } } }] });

    c.queue.bedrock.push({ frames: converseStream({ tools: [{ id: 'tooluse_nova2', name: 'get_weather', fragments: ['{"city":', '"Paris"}'] }], stop: 'tool_use', usage: { inputTokens: 30, outputTokens: 10 } }) });
    const done = await client.chat.completions.stream({ model: 'bedrock-nova', messages: [question], tools }).finalChatCompletion();
    expect(done.choices[0].message.tool_calls![0]).toMatchObject({ id: 'tooluse_nova2', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(done.choices[0].finish_reason).toBe('tool_calls');

    // the tool result goes back as Converse's toolResult
    c.queue.bedrock.push({ json: { output: { message: { role: 'assistant', content: [{ text: 'Sunny.' }] } }, stopReason: 'end_turn', usage: { inputTokens: 50, outputTokens: 2 } } });
    const second = await client.chat.completions.create({ model: 'bedrock-nova', messages: [question, first.choices[0].message, { role: 'tool', tool_call_id: 'tooluse_nova1', content: result }], tools });
    expect(second.choices[0].message.content).toBe('Sunny.');
    expect(c.last('bedrock').json.messages).toEqual([
      { role: 'user', content: [{ text: 'What is the weather in Paris?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_nova1', name: 'get_weather', input: { city: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_nova1', content: [{ text: result }] } }] },
    ]);
  });
});
