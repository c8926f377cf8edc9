import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaUsed, startGatewayFixture, usageRecords, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { common as commonWire, messages as anthropicWire } from '../helpers/wire-fixtures.js';

/**
 * Issue #28: the official `@anthropic-ai/sdk` pointed at the Anthropic-compatible base URL
 * ({base_url}/gateway, so `POST /gateway/v1/messages`) runs an agent's tool loop through an
 * alias whose target speaks the common format, JSON and streamed, with what Claude Code
 * sends (system blocks with cache_control, metadata, anthropic-beta, ?beta=true). The
 * upstreams are loopback mocks answering in each provider's documented wire format.
 */
const YAML = `
aliases:
  agent-gpt:
    - { provider: openai, model: gpt-4.1 }
  agent-lite:
    - { provider: openai, model: gpt-4o-mini }
  agent-haiku:
    - { provider: anthropic, model: claude-3-5-haiku-latest }
`;
let f: GatewayFixture;
let oai: ScriptedUpstream;
let anth: ScriptedUpstream;
let u: TestUser;
let client: Anthropic;
beforeAll(async () => {
  oai = await startScripted();
  anth = await startScripted();
  f = await startGatewayFixture({ yaml: YAML, env: { AGW_PROVIDER_OPENAI_BASE_URL: oai.url, AGW_PROVIDER_ANTHROPIC_BASE_URL: anth.url } });
  u = await f.d.user({ tier: 'pro', balance: 5 });
  client = new Anthropic({ apiKey: u.key, baseURL: `${f.d.api}/gateway`, maxRetries: 0 });
});
afterAll(async () => {
  await f?.close();
  await oai?.close();
  await anth?.close();
});

const tools: Anthropic.Tool[] = [
  {
    name: 'read_file',
    description: 'Read a file of the project',
    input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    cache_control: { type: 'ephemeral' },
  },
];
const commonTools = [
  { type: 'function', function: { name: 'read_file', description: 'Read a file of the project', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } } },
];
const system: Anthropic.TextBlockParam[] = [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }];
const ask: Anthropic.MessageParam = { role: 'user', content: 'What does README.md say?' };
const call = { id: 'call_abc123', name: 'read_file', fragments: ['{"pa', 'th": "READ', 'ME.md"}'] };
const fileText = '# agw\nAn AI gateway.';

describe('the Anthropic SDK against /gateway, through an alias to the common format', () => {
  it('runs a two-turn tool loop (JSON): tool_use out, tool_result back as a tool message; what the format lacks is named', async () => {
    oai.queue({ json: commonWire.toolCalls('gpt-4.1', [call]) });
    const { data: first, response } = await client.messages
      .create({ model: 'agent-gpt', max_tokens: 1024, system, tools, messages: [ask], metadata: { user_id: 'user-7' } })
      .withResponse();
    expect(response.headers.get('x-service-resolved-provider')).toBe('openai');
    expect(response.headers.get('x-service-dropped-params')).toBe('cache_control');
    expect(first).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'tool_use', usage: { input_tokens: 40, output_tokens: 12 } });
    expect(first.content).toEqual([{ type: 'tool_use', id: call.id, name: 'read_file', input: { path: 'README.md' } }]);
    expect(oai.requests.at(-1)!.headers.authorization).toMatch(/^Bearer sk-/);
    expect(oai.last()).toEqual({
      model: 'gpt-4.1',
      messages: [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: 'What does README.md say?' },
      ],
      max_completion_tokens: 1024,
      tools: commonTools,
      user: 'user-7',
    });

    oai.queue({ json: commonWire.text('gpt-4.1', 'It says agw is an AI gateway.') });
    const second = await client.messages.create({
      model: 'agent-gpt',
      max_tokens: 1024,
      system,
      tools,
      messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: fileText }] }],
    });
    expect(second).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'It says agw is an AI gateway.' }] });
    expect(oai.last().messages).toEqual([
      { role: 'system', content: 'You are a coding agent.' },
      { role: 'user', content: 'What does README.md say?' },
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }] },
      { role: 'tool', tool_call_id: call.id, content: fileText },
    ]);
    const recs = (await usageRecords(f.db, u.id)).slice(-2);
    expect(recs.map((r) => [r.status, r.provider, r.model, r.alias, r.prompt, r.completion])).toEqual([
      ['finalized', 'openai', 'gpt-4.1', 'agent-gpt', 40, 12],
      ['finalized', 'openai', 'gpt-4.1', 'agent-gpt', 20, 5],
    ]);
  });

  it('runs it streamed: Messages events, the tool input assembled from input_json_delta in order', async () => {
    oai.queue({ sse: commonWire.streamToolCalls('gpt-4.1', [call]) });
    const partials: string[] = [];
    const stream = client.messages.stream({ model: 'agent-gpt', max_tokens: 512, system, tools, messages: [ask] });
    stream.on('inputJson', (delta) => partials.push(delta));
    const first = await stream.finalMessage();
    expect(partials.join('')).toBe('{"path": "README.md"}');
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([{ type: 'tool_use', id: call.id, name: 'read_file', input: { path: 'README.md' } }]);
    expect(first.usage).toMatchObject({ input_tokens: 40, output_tokens: 12 });
    expect(oai.last()).toMatchObject({ stream: true, stream_options: { include_usage: true }, max_completion_tokens: 512 });

    oai.queue({ sse: commonWire.streamText('gpt-4.1', ['It says ', 'agw is an AI gateway.']) });
    const s2 = client.messages.stream({
      model: 'agent-gpt',
      max_tokens: 512,
      tools,
      messages: [ask, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: [{ type: 'text', text: fileText }] }] }],
    });
    let text = '';
    s2.on('text', (t) => (text += t));
    const final = await s2.finalMessage();
    expect(text).toBe('It says agw is an AI gateway.');
    expect(final).toMatchObject({ stop_reason: 'end_turn', usage: { input_tokens: 20, output_tokens: 5 } });
    expect(oai.last().messages).toEqual([
      { role: 'user', content: 'What does README.md say?' },
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }] },
      { role: 'tool', tool_call_id: call.id, content: fileText },
    ]);
  });

  it('carries ?beta=true and anthropic-beta to a messages-format target, and names anthropic-beta for any other', async () => {
    anth.queue({ json: anthropicWire.text('claude-3-5-haiku-latest', 'hi') });
    await client.beta.messages.create({ model: 'agent-haiku', max_tokens: 100, messages: [ask], betas: ['token-efficient-tools-2025-02-19'] });
    const seen = anth.requests.at(-1)!;
    expect(seen.path).toBe('/v1/messages');
    expect(seen.query).toBe('beta=true');
    expect(seen.headers['anthropic-beta']).toBe('token-efficient-tools-2025-02-19');
    expect(seen.headers['x-api-key']).not.toBe(u.key); // agw's provider key, never the caller's
    expect(seen.body).toEqual({ model: 'claude-3-5-haiku-latest', max_tokens: 100, messages: [ask] });

    oai.queue({ json: commonWire.text('gpt-4o-mini', 'hi') });
    const { response } = await client.beta.messages.create({ model: 'agent-lite', max_tokens: 100, messages: [ask], betas: ['token-efficient-tools-2025-02-19'] }).withResponse();
    expect(response.headers.get('x-service-dropped-params')).toBe('anthropic-beta');
    expect(oai.requests.at(-1)!.headers['anthropic-beta']).toBeUndefined();
  });

  it('count_tokens is free and unmetered, also on an empty wallet: asked of a messages-format target, estimated for another', async () => {
    const broke = await f.d.user({ tier: 'free' });
    const poor = new Anthropic({ apiKey: broke.key, baseURL: `${f.d.api}/gateway`, maxRetries: 0 });
    anth.queue({ json: { input_tokens: 42 } });
    expect(await poor.messages.countTokens({ model: 'agent-haiku', system, tools, messages: [ask] })).toEqual({ input_tokens: 42 });
    const seen = anth.requests.at(-1)!;
    expect(seen.path).toBe('/v1/messages/count_tokens');
    expect(seen.body).toEqual({ model: 'claude-3-5-haiku-latest', messages: [ask], system, tools });
    const before = oai.requests.length;
    const estimate = await poor.messages.countTokens({ model: 'agent-lite', tools, messages: [ask] });
    expect(estimate.input_tokens).toBeGreaterThan(10);
    expect(oai.requests.length).toBe(before);
    expect(await quotaUsed(f.db, broke.id)).toBe(0);
    expect(await usageRecords(f.db, broke.id, { refused: true })).toEqual([]);
    expect((await walletRow(f.db, broke.id)).balance).toBe(0);
    // and a message on that empty wallet is refused, in the Anthropic error shape
    const err = (await poor.messages.create({ model: 'agent-lite', max_tokens: 10, messages: [ask] }).catch((e: unknown) => e)) as InstanceType<typeof Anthropic.APIError>;
    expect(err.status).toBe(402);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'billing_error', code: 'INSUFFICIENT_FUNDS' } });
  });

  it('errors come in Anthropic’s error object plus error.code; x-api-key or Bearer both authenticate', async () => {
    const err = await client.messages.create({ model: 'claude-9-imaginary', max_tokens: 10, messages: [ask] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const e = err as InstanceType<typeof Anthropic.BadRequestError>;
    expect(e.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'INVALID_REQUEST', message: expect.stringContaining('no such model') } });
    const noKey = await fetch(`${f.d.api}/gateway/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'agent-gpt', max_tokens: 5, messages: [ask] }) });
    expect(noKey.status).toBe(401);
    expect(await noKey.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: expect.any(String), code: 'UNAUTHORIZED' } });
    const noModel = await f.d.fetch('/gateway/v1/messages', { method: 'POST', key: u.key, json: { max_tokens: 5, messages: [ask] } });
    expect(noModel.status).toBe(400);
    expect(await noModel.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'MISSING_MODEL' } });
    oai.queue({ json: commonWire.text('gpt-4.1', 'ok') });
    const bearer = await f.d.fetch('/gateway/v1/messages', { method: 'POST', key: u.key, json: { model: 'agent-gpt', max_tokens: 5, messages: [ask] } });
    expect(bearer.status).toBe(200);
    expect((await bearer.json()).content).toEqual([{ type: 'text', text: 'ok' }]);
  });
});
