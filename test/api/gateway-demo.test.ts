import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/shared/config/load.js';
import { startDaemon, type Daemon } from '../../src/daemon/serve.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

/** `agw serve --demo`: simulated upstreams and a seeded key; every gateway call works offline. */
// the demo on the matrix's store: SQLite, or a fresh PostgreSQL database
const onPostgres = process.env.AGW_TEST_STORE === 'postgres';
let daemon: Daemon;
let dataDir: string;
let pg: TestDatabase | undefined;
let key: string;
let api: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'agw-demo-'));
  if (onPostgres) pg = await createTestDatabase();
  const env: Record<string, string> = pg ? { AGW_STORE: `${pg.url}?pool_max=5` } : {};
  daemon = await startDaemon({ port: 0, host: '127.0.0.1', dataDir, demo: true, config: loadConfig(undefined, env), logLevel: 'silent' });
  key = daemon.demo!.seeded!.key;
  api = `${daemon.url}/api`;
});
afterAll(async () => {
  await daemon?.close();
  await pg?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const aiChatUsed = async (): Promise<number> =>
  (await (await fetch(`${api}/gateway/entitlements`, { headers: { authorization: `Bearer ${key}` } })).json()).quotas.ai_chat.used;

describe('demo mode', () => {
  it('unified chat, smart route and proxy all answer with the seeded key', async () => {
    const chat = await fetch(`${api}/gateway/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'smart-pro', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-service-resolved-provider')).toBe('anthropic');

    const smart = new OpenAI({ apiKey: key, baseURL: `${api}/external/smart/v1`, maxRetries: 0 });
    const stream = await smart.chat.completions.create({ model: 'best-cheap-llm', messages: [{ role: 'user', content: 'Hello' }], stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toContain('Echo: Hello');

    const proxy = new OpenAI({ apiKey: key, baseURL: `${api}/external/openai/v1`, maxRetries: 0 });
    const r = await proxy.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
    expect(r.choices[0].message.content).toContain('Echo: Hello');

    const ent = await (await fetch(`${api}/gateway/entitlements`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(ent.quotas.ai_chat.used).toBe(3);
    expect(ent.wallet.monthlyAllowanceUsed).toBeGreaterThan(0);
  });
});

/**
 * An agent's tool loop offline: the demo's simulated providers answer a request with tools
 * by calling the first tool (arguments from its schema: the required `city` gets the last
 * word of the question) and a tool result with text quoting it. Through aliases that cross
 * formats: smart-pro is anthropic (messages format) behind the OpenAI-compatible base URL,
 * smart-lite is openai (common format) behind the Anthropic-compatible one.
 */
describe('demo mode: a two-turn tool loop through the official SDKs', () => {
  const question = 'What is the weather in Paris?';
  const result = '21 C and sunny';
  const schema = { type: 'object' as const, properties: { city: { type: 'string' }, unit: { type: 'string' } }, required: ['city'] };

  describe('openai SDK against /api/gateway/v1, alias smart-pro (served by anthropic)', () => {
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: schema } }];
    const client = () => new OpenAI({ apiKey: key, baseURL: `${api}/gateway/v1`, maxRetries: 0 });
    const turn2 = (message: OpenAI.ChatCompletionMessage): OpenAI.ChatCompletionMessageParam[] => [
      { role: 'user', content: question },
      { role: 'assistant', content: message.content, tool_calls: message.tool_calls },
      { role: 'tool', tool_call_id: message.tool_calls![0].id, content: result },
    ];

    it('JSON: tool_calls, then the tool result quoted', async () => {
      const used = await aiChatUsed();
      const { data: first, response } = await client()
        .chat.completions.create({ model: 'smart-pro', messages: [{ role: 'user', content: question }], tools })
        .withResponse();
      expect(response.headers.get('x-service-resolved-provider')).toBe('anthropic');
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      const call = first.choices[0].message.tool_calls![0];
      expect(call.type === 'function' && call.function.name).toBe('get_weather');
      expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
      expect(first.usage!.completion_tokens).toBeGreaterThan(0);

      const second = await client().chat.completions.create({ model: 'smart-pro', messages: turn2(first.choices[0].message), tools });
      expect(second.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: `The tool said: ${result}` } });
      expect(await aiChatUsed()).toBe(used + 2);
    });

    it('streamed: the call arrives in several argument deltas, the answer as text', async () => {
      const stream = client().chat.completions.stream({ model: 'smart-pro', messages: [{ role: 'user', content: question }], tools });
      const argDeltas: string[] = [];
      stream.on('chunk', (c) => {
        for (const tc of c.choices[0]?.delta?.tool_calls ?? []) if (tc.function?.arguments) argDeltas.push(tc.function.arguments);
      });
      const first = await stream.finalChatCompletion();
      expect(first.choices[0].finish_reason).toBe('tool_calls');
      expect(argDeltas.length).toBeGreaterThan(1);
      expect(JSON.parse(argDeltas.join(''))).toEqual({ city: 'Paris' });

      const s2 = await client().chat.completions.create({ model: 'smart-pro', messages: turn2(first.choices[0].message), tools, stream: true });
      let text = '';
      for await (const chunk of s2) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe(`The tool said: ${result}`);
    });
  });

  describe('@anthropic-ai/sdk against /api/gateway, alias smart-lite (served by openai)', () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'The weather in a city', input_schema: schema }];
    const client = () => new Anthropic({ apiKey: key, baseURL: `${api}/gateway`, maxRetries: 0 });
    const turn2 = (first: Anthropic.Message): Anthropic.MessageParam[] => {
      const use = first.content.find((b) => b.type === 'tool_use')!;
      return [
        { role: 'user', content: question },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.type === 'tool_use' ? use.id : '', content: result }] },
      ];
    };

    it('JSON: tool_use, then the tool_result quoted', async () => {
      const used = await aiChatUsed();
      const { data: first, response } = await client()
        .messages.create({ model: 'smart-lite', max_tokens: 1024, messages: [{ role: 'user', content: question }], tools })
        .withResponse();
      expect(response.headers.get('x-service-resolved-provider')).toBe('openai');
      expect(first.stop_reason).toBe('tool_use');
      expect(first.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } })]);

      const second = await client().messages.create({ model: 'smart-lite', max_tokens: 1024, messages: turn2(first), tools });
      expect(second.stop_reason).toBe('end_turn');
      expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: `The tool said: ${result}` })]);
      expect(await aiChatUsed()).toBe(used + 2);
    });

    it('streamed: tool_use from input_json_delta fragments, the answer as text deltas', async () => {
      const stream = client().messages.stream({ model: 'smart-lite', max_tokens: 1024, messages: [{ role: 'user', content: question }], tools });
      const fragments: string[] = [];
      stream.on('streamEvent', (e) => {
        if (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' && e.delta.partial_json) fragments.push(e.delta.partial_json);
      });
      const first = await stream.finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      expect(fragments.length).toBeGreaterThan(1);
      expect(first.content).toEqual([expect.objectContaining({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } })]);

      const s2 = client().messages.stream({ model: 'smart-lite', max_tokens: 1024, messages: turn2(first), tools });
      let text = '';
      s2.on('text', (t) => (text += t));
      const second = await s2.finalMessage();
      expect(second.stop_reason).toBe('end_turn');
      expect(text).toBe(`The tool said: ${result}`);
    });
  });
});
