import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaUsed, startGatewayFixture, usageRecords, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { messages as anthropicWire } from '../helpers/wire-fixtures.js';

/**
 * Issue #28: the official `openai` SDK pointed at the OpenAI-compatible base URL
 * ({base_url}/gateway/v1) runs an agent's tool loop through an alias whose target speaks
 * the messages format: call → tool_use → tool_result → final answer, JSON and streamed.
 * The upstream is a loopback mock answering in Anthropic's documented wire format.
 */
const YAML = `
aliases:
  agent-claude:
    - { provider: anthropic, model: claude-sonnet-4-5 }
`;
let f: GatewayFixture;
let anth: ScriptedUpstream;
let u: TestUser;
let client: OpenAI;
beforeAll(async () => {
  anth = await startScripted();
  f = await startGatewayFixture({ yaml: YAML, env: { AGW_PROVIDER_ANTHROPIC_BASE_URL: anth.url } });
  u = await f.d.user({ tier: 'pro', balance: 5 });
  client = new OpenAI({ apiKey: u.key, baseURL: `${f.d.api}/gateway/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await f?.close();
  await anth?.close();
});

const tools: OpenAI.ChatCompletionTool[] = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city'] },
    },
  },
];
const anthropicTools = [
  {
    name: 'get_weather',
    description: 'The weather in a city',
    input_schema: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } }, required: ['city'] },
  },
];
const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };
const call = { id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', fragments: ['{"city": "Pa', 'ris", "unit"', ': "c"}'] };
const result = '{"temp": 21, "sky": "sunny"}';

describe('the openai SDK against /gateway/v1, through an alias to the messages format', () => {
  it('runs a two-turn tool loop (JSON): tool_calls out, the assistant turn and the tool turn back as tool_use / tool_result', async () => {
    anth.queue({ json: anthropicWire.toolUse('claude-sonnet-4-5', [call], { text: 'Let me check.' }) });
    const { data: first, response } = await client.chat.completions
      .create({ model: 'agent-claude', messages: [question], tools, tool_choice: 'auto', parallel_tool_calls: false, max_completion_tokens: 1000 })
      .withResponse();
    expect(response.headers.get('x-service-resolved-provider')).toBe('anthropic');
    expect(response.headers.get('x-service-dropped-params')).toBe('');
    expect(first.object).toBe('chat.completion');
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.content).toBe('Let me check.');
    expect(first.choices[0].message.tool_calls).toEqual([{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"c"}' } }]);
    expect(first.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 });
    // what the messages-format upstream got: its own tools, tool_choice and output cap
    expect(anth.requests.at(-1)!.headers['x-api-key']).toBeDefined();
    expect(anth.last()).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 1000,
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: anthropicTools,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
    });

    anth.queue({ json: anthropicWire.text('claude-sonnet-4-5', 'It is 21 °C and sunny in Paris.') });
    const turn2: OpenAI.ChatCompletionMessageParam[] = [question, first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: result }];
    const second = await client.chat.completions.create({ model: 'agent-claude', messages: turn2, tools, max_completion_tokens: 1000 });
    expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'It is 21 °C and sunny in Paris.' } });
    expect(anth.last().messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: [{ type: 'text', text: 'Let me check.' }, { type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris', unit: 'c' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: result }] },
    ]);
    // two calls, each metered like unified chat, recorded with endpoint chat against the concrete model
    const recs = (await usageRecords(f.db, u.id)).slice(-2);
    expect(recs.map((r) => [r.status, r.provider, r.model, r.alias])).toEqual([
      ['finalized', 'anthropic', 'claude-sonnet-4-5', 'agent-claude'],
      ['finalized', 'anthropic', 'claude-sonnet-4-5', 'agent-claude'],
    ]);
  });

  it('runs it streamed: the SDK assembles the tool call from index-keyed deltas, arguments complete and in order; content null goes back', async () => {
    const quota = await quotaUsed(f.db, u.id);
    anth.queue({ sse: anthropicWire.streamToolUse('claude-sonnet-4-5', [call]) });
    const stream = client.chat.completions.stream({ model: 'agent-claude', messages: [question], tools, max_completion_tokens: 500 });
    const argDeltas: string[] = [];
    stream.on('chunk', (c) => {
      for (const tc of c.choices[0]?.delta?.tool_calls ?? []) if (tc.function?.arguments) argDeltas.push(tc.function.arguments);
    });
    const first = await stream.finalChatCompletion();
    expect(argDeltas.join('')).toBe('{"city": "Paris", "unit": "c"}');
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.content).toBeNull();
    expect(first.choices[0].message.tool_calls![0]).toMatchObject({ id: call.id, function: { name: 'get_weather', arguments: '{"city": "Paris", "unit": "c"}' } });
    expect(first.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 12 });
    expect(anth.last()).toMatchObject({ stream: true, max_tokens: 500, tools: anthropicTools });

    anth.queue({ sse: anthropicWire.streamText('claude-sonnet-4-5', ['It is 21 °C ', 'and sunny.']) });
    const assistant = { role: 'assistant' as const, content: null, tool_calls: first.choices[0].message.tool_calls };
    const s2 = await client.chat.completions.create({ model: 'agent-claude', messages: [question, assistant, { role: 'tool', tool_call_id: call.id, content: result }], tools, stream: true });
    let text = '';
    for await (const chunk of s2) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe('It is 21 °C and sunny.');
    expect(anth.last().messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: { city: 'Paris', unit: 'c' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: result }] },
    ]);
    expect(await quotaUsed(f.db, u.id)).toBe(quota + 2);
  });

  it('GET /gateway/v1/models lists the aliases and models the caller may call (models.list)', async () => {
    const ids: string[] = [];
    for await (const m of client.models.list()) {
      expect(m.object).toBe('model');
      expect(typeof m.created).toBe('number');
      ids.push(m.id);
    }
    expect(ids).toContain('agent-claude');
    expect(ids).toContain('smart-pro');
    expect(ids).toContain('claude-sonnet-4-5');
    expect(ids).toContain('gpt-4o-mini');
    // premium is above the pro tier; a provider without a key here is not callable
    expect(ids).not.toContain('claude-opus-4-1');
    expect(ids).not.toContain('gemini-2.5-flash');
  });

  it('errors come in OpenAI’s error object with agw’s code, so the SDK shows the message', async () => {
    const err = await client.chat.completions.create({ model: 'gpt-9-imaginary', messages: [question] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.code).toBe('INVALID_REQUEST');
    expect(e.type).toBe('invalid_request_error');
    expect(e.param).toBe('model');
    expect(e.message).toContain('no such model');
    const raw = await f.d.fetch('/gateway/v1/chat/completions', { method: 'POST', key: 'agw_nope', json: { model: 'agent-claude', messages: [question] } });
    expect(raw.status).toBe(401);
    expect(await raw.json()).toEqual({ error: { message: expect.any(String), type: 'authentication_error', code: 'UNAUTHORIZED', param: null } });
    const broke = await f.d.user({ tier: 'free' });
    const poor = new OpenAI({ apiKey: broke.key, baseURL: `${f.d.api}/gateway/v1`, maxRetries: 0 });
    const e402 = (await poor.chat.completions.create({ model: 'smart-lite', messages: [question] }).catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e402.status).toBe(402);
    expect(e402.code).toBe('INSUFFICIENT_FUNDS');
  });
});
