import { afterEach, describe, expect, it } from 'vitest';
import { countTokens, simReply, startAnthropicSim, startOpenAiSim, type SimUpstream } from '../../src/daemon/demo/upstreams.js';
import { names, ownWords, shortValue, valueFor } from '../../src/daemon/demo/sim-tools.js';

/**
 * The demo's simulated upstreams speak tools as their APIs do: a request carrying function
 * tools gets one call to the tool it asks for (named by tool_choice or by the user's message,
 * or any when a call is required; arguments built from the tool's schema), a request ending
 * in a tool result gets text quoting it; JSON and streamed, in each provider's own format.
 */
const sims: SimUpstream[] = [];
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});
async function start(kind: 'openai' | 'anthropic'): Promise<SimUpstream> {
  const s = kind === 'openai' ? await startOpenAiSim() : await startAnthropicSim();
  sims.push(s);
  return s;
}

const weather = {
  type: 'object',
  properties: { city: { type: 'string' }, days: { type: 'integer' }, metric: { type: 'boolean' }, unit: { type: 'string', enum: ['c', 'f'] }, note: { type: 'string' } },
  required: ['city', 'days', 'metric', 'unit'],
};
const args = { city: 'Paris', days: 1, metric: true, unit: 'c' };
const question = 'What is the weather in Paris?';
const openAiTools = [
  { type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } },
  { type: 'function', function: { name: 'get_weather', parameters: weather } },
];
const anthropicTools = [
  { type: 'web_search_20250305', name: 'web_search' },
  { name: 'get_time', input_schema: { type: 'object', properties: {} } },
  { name: 'get_weather', input_schema: weather },
];

const post = (sim: SimUpstream, path: string, body: unknown) =>
  fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk', 'x-api-key': 'ak', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
const chat = (sim: SimUpstream, body: Record<string, unknown>) => post(sim, '/v1/chat/completions', { model: 'gpt-4o-mini', ...body });
const msgs = (sim: SimUpstream, body: Record<string, unknown>) => post(sim, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 100, ...body });
const sseData = (text: string) => [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]);

describe('which tool, and its arguments from a JSON Schema', () => {
  it('a message names a tool by its name or a part of it of 4 letters or more', () => {
    expect(names(question, 'get_weather')).toBe(true);
    expect(names('read it', 'Read')).toBe(true);
    expect(names('edit the notebook', 'NotebookEdit')).toBe(true);
    expect(names('run ls please', 'ls')).toBe(true);
    expect(names('call get_time', 'get_time')).toBe(true);
    expect(names('get me the time', 'get_weather')).toBe(false); // "get" is too short to name it
    expect(names('Hello there', 'Agent')).toBe(false);
  });

  it("only the user's own words count: what a client wraps in tags (Claude Code's reminders, notifications) names no tool", async () => {
    expect(ownWords('<system-reminder>\nUse the Agent tool.\n</system-reminder>Hello')).toBe(' Hello');
    const sim = await start('anthropic');
    const tools = [{ name: 'Agent', input_schema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] } }];
    const content = (text: string) => [{ type: 'text', text: '<system-reminder>Available agent types for the Agent tool</system-reminder>' }, { type: 'text', text }];
    const hello = (await (await msgs(sim, { messages: [{ role: 'user', content: content('Hello') }], tools })).json()) as any;
    expect(hello.stop_reason).toBe('end_turn');
    const asked = (await (await msgs(sim, { messages: [{ role: 'user', content: content('Ask an agent to say hi') }], tools })).json()) as any;
    expect(asked.content[0]).toMatchObject({ type: 'tool_use', name: 'Agent', input: { prompt: 'hi' } });
  });

  it('gives required properties the least value of their type and leaves the others out', () => {
    expect(shortValue(question)).toBe('Paris');
    expect(shortValue('Read README.md.')).toBe('README.md');
    expect(shortValue('Read /etc/hostname')).toBe('/etc/hostname');
    expect(shortValue('?! /')).toBe('demo');
    expect(valueFor(weather, 'Paris')).toEqual(args);
    expect(valueFor({ type: 'object', properties: { q: { type: 'string' } } }, 'x')).toEqual({});
    expect(
      valueFor(
        {
          type: 'object',
          required: ['a', 'b', 'c', 'd'],
          properties: { a: { type: ['null', 'number'] }, b: { anyOf: [{ type: 'null' }, { type: 'boolean' }] }, c: { type: 'array', minItems: 2, items: { type: 'string' } }, d: { const: 'x' } },
        },
        'w',
      ),
    ).toEqual({ a: 1, b: true, c: ['w', 'w'], d: 'x' });
  });
});

describe('OpenAI sim with tools', () => {
  it('calls the named function (JSON): content null, one tool_calls entry, finish_reason tool_calls', async () => {
    const sim = await start('openai');
    const messages = [{ role: 'user', content: question }];
    const res = await chat(sim, { messages, tools: openAiTools, tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    const body = (await res.json()) as any;
    const call = body.choices[0].message.tool_calls[0];
    expect(body.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { role: 'assistant', content: null } });
    expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
    expect(call.id).toMatch(/^call_/);
    expect(JSON.parse(call.function.arguments)).toEqual(args);
    expect(body.usage.completion_tokens).toBe(countTokens(`get_weather${call.function.arguments}`));
    // no tool_choice: the tool the message names (the second here)
    const named = (await (await chat(sim, { messages, tools: openAiTools })).json()) as any;
    expect(named.choices[0].message.tool_calls[0].function).toEqual({ name: 'get_weather', arguments: JSON.stringify(args) });
    // a message that names none: text, unless a call is required (then the first tool)
    const hello = [{ role: 'user', content: 'Hello' }];
    const text = (await (await chat(sim, { messages: hello, tools: openAiTools })).json()) as any;
    expect(text.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: simReply('Hello') } });
    const required = (await (await chat(sim, { messages: hello, tools: openAiTools, tool_choice: 'required' })).json()) as any;
    expect(required.choices[0].message.tool_calls[0].function).toEqual({ name: 'get_time', arguments: '{}' });
    // tool_choice none: today's echo
    const none = (await (await chat(sim, { messages, tools: openAiTools, tool_choice: 'none' })).json()) as any;
    expect(none.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: simReply(question) } });
    // a name no tool has: 400, as the API refuses it
    const bad = await chat(sim, { messages, tools: openAiTools, tool_choice: { type: 'function', function: { name: 'nope' } } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.type).toBe('invalid_request_error');
  });

  it('streams the call as index-keyed deltas: id and name first, then the arguments in several fragments', async () => {
    const sim = await start('openai');
    const res = await chat(sim, {
      messages: [{ role: 'user', content: question }],
      tools: openAiTools.slice(1),
      stream: true,
      stream_options: { include_usage: true },
    });
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    const deltas = chunks.filter((c) => c.choices[0]?.delta?.tool_calls).map((c) => c.choices[0].delta.tool_calls[0]);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(deltas[0].id).toMatch(/^call_/);
    expect(deltas.length).toBeGreaterThan(3);
    for (const d of deltas.slice(1)) expect(Object.keys(d).sort()).toEqual(['function', 'index']);
    const joined = deltas.map((d) => d.function.arguments).join('');
    expect(JSON.parse(joined)).toEqual(args);
    expect(chunks.at(-2).choices[0].finish_reason).toBe('tool_calls');
    expect(chunks.at(-1).usage.completion_tokens).toBe(countTokens(`get_weather${joined}`));
  });

  it('answers a tool result with text that quotes it', async () => {
    const sim = await start('openai');
    const messages = [
      { role: 'user', content: question },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '21 C, sunny' },
    ];
    const body = (await (await chat(sim, { messages, tools: openAiTools })).json()) as any;
    expect(body.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'The tool said: 21 C, sunny' } });
    // the call and the result are part of the prompt
    expect(body.usage.prompt_tokens).toBe(countTokens(question) + countTokens('get_weather{"city":"Paris"}') + countTokens('21 C, sunny') + 9);
  });
});

describe('Anthropic sim with tools', () => {
  it('calls the named tool (JSON): one tool_use block, stop_reason tool_use; server tools are not called', async () => {
    const sim = await start('anthropic');
    const messages = [{ role: 'user', content: question }];
    const body = (await (await msgs(sim, { messages, tools: anthropicTools, tool_choice: { type: 'tool', name: 'get_weather' } })).json()) as any;
    expect(body).toMatchObject({ type: 'message', stop_reason: 'tool_use', stop_sequence: null, content: [{ type: 'tool_use', name: 'get_weather', input: args }] });
    expect(body.content).toHaveLength(1);
    expect(body.content[0].id).toMatch(/^toolu_/);
    expect(body.usage.output_tokens).toBe(countTokens(`get_weather${JSON.stringify(args)}`));
    const named = (await (await msgs(sim, { messages, tools: anthropicTools })).json()) as any;
    expect(named.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: args });
    const hello = [{ role: 'user', content: 'Hello' }];
    const text = (await (await msgs(sim, { messages: hello, tools: anthropicTools })).json()) as any;
    expect(text).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: simReply('Hello') }] });
    const first = (await (await msgs(sim, { messages: hello, tools: anthropicTools, tool_choice: { type: 'any' } })).json()) as any;
    expect(first.content[0]).toMatchObject({ type: 'tool_use', name: 'get_time', input: {} });
    const none = (await (await msgs(sim, { messages, tools: anthropicTools, tool_choice: { type: 'none' } })).json()) as any;
    expect(none).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: simReply(question) }] });
    const bad = await msgs(sim, { messages, tools: anthropicTools, tool_choice: { type: 'tool', name: 'web_search' } });
    expect(bad.status).toBe(400);
  });

  it('streams tool_use: content_block_start, input_json_delta fragments, content_block_stop', async () => {
    const sim = await start('anthropic');
    const res = await msgs(sim, { messages: [{ role: 'user', content: question }], tools: anthropicTools.slice(2), stream: true });
    const text = await res.text();
    const events = [...text.matchAll(/^event: (\w+)$/gm)].map((m) => m[1]);
    const data = sseData(text).map((d) => JSON.parse(d));
    expect(events[0]).toBe('message_start');
    expect(events.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(data[1]).toMatchObject({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', name: 'get_weather', input: {} } });
    const fragments = data.filter((d) => d.type === 'content_block_delta').map((d) => (expect(d.delta.type).toBe('input_json_delta'), d.delta.partial_json));
    expect(fragments.length).toBeGreaterThan(3);
    expect(JSON.parse(fragments.join(''))).toEqual(args);
    expect(data.at(-2)).toMatchObject({ delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: countTokens(`get_weather${fragments.join('')}`) } });
  });

  it('answers tool_result blocks with text that quotes them, streamed too', async () => {
    const sim = await start('anthropic');
    const messages = [
      { role: 'user', content: question },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '21 C, sunny' }] }] },
    ];
    const body = (await (await msgs(sim, { messages, tools: anthropicTools })).json()) as any;
    expect(body).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'The tool said: 21 C, sunny' }] });
    expect(body.usage.input_tokens).toBe(countTokens(question) + countTokens('get_weather{"city":"Paris"}') + countTokens('21 C, sunny') + 9);
    const streamed = await (await msgs(sim, { messages, tools: anthropicTools, stream: true })).text();
    const pieces = sseData(streamed).map((d) => JSON.parse(d)).filter((d) => d.delta?.type === 'text_delta').map((d) => d.delta.text);
    expect(pieces.join('')).toBe('The tool said: 21 C, sunny');
  });
});
