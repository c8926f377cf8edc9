import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { quotaUsed, usageRecords, usageTransactions } from '../helpers/gateway-fixture.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { json, startMock, type Mock } from '../helpers/cloud-mocks.js';

/**
 * What agw does not price is not served at a price that is not its (review M1): a priority
 * service tier, Bedrock's priority and latency-optimized inference and guardrails, server
 * tools billed per use, background responses. The proxy refuses them (400 UNPRICED_FEATURE,
 * before the provider, free); unified chat leaves a priority tier out and names it.
 */
let d: TestDaemon;
let openai: ScriptedUpstream;
let anthropic: ScriptedUpstream;
let bedrock: Mock;

beforeAll(async () => {
  openai = await startScripted();
  anthropic = await startScripted();
  bedrock = await startMock((_s, res) => json(res, 200, { output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 } }));
  d = await startTestDaemon({
    yaml: `providers:\n  bedrock:\n    baseUrl: ${bedrock.url}\n    accessKeyId: AKIDEXTRASTEST00001\n    secretAccessKey: extras-test-secret-0123456789\n`,
    env: {
      AGW_PROVIDER_OPENAI_BASE_URL: openai.url,
      AGW_PROVIDER_OPENAI_KEY: 'sk-extras-0123456789',
      AGW_PROVIDER_ANTHROPIC_BASE_URL: anthropic.url,
      AGW_PROVIDER_ANTHROPIC_KEY: 'sk-ant-extras-0123456789',
    },
  });
});
afterAll(async () => {
  await d?.close();
  await Promise.all([openai?.close(), anthropic?.close(), bedrock?.close()]);
});

const chatAnswer = { json: { id: 'c', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } } };
const messages = [{ role: 'user', content: 'hi' }];

async function unpriced(res: Response, feature: string) {
  const text = await res.text();
  expect(res.status, text).toBe(400);
  expect(JSON.parse(text)).toMatchObject({ code: 'UNPRICED_FEATURE', details: { feature } });
}

describe('the proxy refuses what agw does not price, before the provider, free', () => {
  test('OpenAI: service_tier priority or scale, background responses, web search and code interpreter tools', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 5 });
    const before = openai.requests.length;
    const post = (path: string, body: unknown) => d.fetch(`/external/openai${path}`, { method: 'POST', key: u.key, json: body });
    await unpriced(await post('/v1/chat/completions', { model: 'gpt-4o-mini', service_tier: 'priority', messages }), 'service_tier');
    await unpriced(await post('/v1/responses', { model: 'gpt-4.1', service_tier: 'scale', input: 'hi' }), 'service_tier');
    await unpriced(await post('/v1/responses', { model: 'gpt-4.1', background: true, input: 'hi' }), 'background');
    await unpriced(await post('/v1/responses', { model: 'gpt-4.1', tools: [{ type: 'web_search' }], input: 'news?' }), 'tools.web_search');
    await unpriced(await post('/v1/responses', { model: 'gpt-4.1', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }], input: 'x' }), 'tools.code_interpreter');
    await unpriced(await post('/v1/chat/completions', { model: 'gpt-4o-mini', web_search_options: {}, messages }), 'web_search_options');
    expect(openai.requests.length).toBe(before);
    expect(await usageTransactions(d.daemon.ctx.db, u.id)).toEqual([]);
    expect(await quotaUsed(d.daemon.ctx.db, u.id)).toBe(0);
    const recs = await usageRecords(d.daemon.ctx.db, u.id, { refused: true });
    expect(recs.map((r) => [r.answerStatus, r.code, r.customer])).toEqual(Array.from({ length: 6 }, () => [400, 'UNPRICED_FEATURE', 0]));
    // the standard tiers pass, charged at the standard price
    openai.queue(chatAnswer);
    expect((await post('/v1/chat/completions', { model: 'gpt-4o-mini', service_tier: 'auto', messages })).status).toBe(200);
  });

  test('Anthropic: the web search and code execution server tools (billed per use); web fetch passes', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 5 });
    const before = anthropic.requests.length;
    const post = (tools: unknown[]) => d.fetch('/external/anthropic/v1/messages', { method: 'POST', key: u.key, json: { model: 'claude-haiku-4-5', max_tokens: 10, tools, messages } });
    await unpriced(await post([{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }]), 'tools.web_search_20250305');
    await unpriced(await post([{ type: 'code_execution_20250825', name: 'code_execution' }]), 'tools.code_execution_20250825');
    expect(anthropic.requests.length).toBe(before);
    anthropic.queue({ json: { id: 'm', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 1 } } });
    expect((await post([{ type: 'web_fetch_20250910', name: 'web_fetch' }])).status).toBe(200);
  });

  test('Bedrock: priority tier and latency-optimized headers, a guardrail, Converse performanceConfig', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 5 });
    const path = '/external/bedrock/model/amazon.nova-pro-v1:0/converse';
    const body = { messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
    const post = (headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
      d.fetch(path, { method: 'POST', key: u.key, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ ...body, ...extra }) });
    await unpriced(await post({ 'x-amzn-bedrock-service-tier': 'priority' }), 'x-amzn-bedrock-service-tier');
    await unpriced(await post({ 'x-amzn-bedrock-performanceconfig-latency': 'optimized' }), 'x-amzn-bedrock-performanceconfig-latency');
    await unpriced(await post({ 'x-amzn-bedrock-guardrailidentifier': 'gr-1' }), 'x-amzn-bedrock-guardrailidentifier');
    await unpriced(await post({}, { performanceConfig: { latency: 'optimized' } }), 'performanceConfig');
    await unpriced(await post({}, { guardrailConfig: { guardrailIdentifier: 'gr-1', guardrailVersion: '1' } }), 'guardrailConfig');
    expect(bedrock.seen).toHaveLength(0);
    expect((await post({ 'x-amzn-bedrock-service-tier': 'default' })).status).toBe(200);
  });
});

describe('unified chat', () => {
  test('a priority service tier is left out and named (strict: refused); a priced one passes', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 5 });
    openai.queue(chatAnswer);
    const res = await d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', service_tier: 'priority', messages } });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(res.headers.get('x-service-dropped-params')).toBe('service_tier');
    expect(openai.last().service_tier).toBeUndefined();
    const strict = await d.fetch('/gateway/chat', { method: 'POST', key: u.key, headers: { 'x-service-strict-params': '1' }, json: { model: 'gpt-4o-mini', service_tier: 'priority', messages } });
    expect(strict.status).toBe(400);
    expect((await strict.json()).code).toBe('UNSUPPORTED_PARAMETER');
    openai.queue(chatAnswer);
    const flex = await d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', service_tier: 'default', messages } });
    expect(flex.status).toBe(200);
    expect(openai.last().service_tier).toBe('default');
  });

  test('a server tool billed per use is refused on the Anthropic base URL too', async () => {
    const u = await d.user({ tier: 'enterprise', balance: 5 });
    const res = await d.fetch('/gateway/v1/messages', {
      method: 'POST',
      headers: { 'x-api-key': u.key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 10, tools: [{ type: 'web_search_20250305', name: 'web_search' }], messages }),
    });
    expect(res.status).toBe(400);
    const b = await res.json();
    expect(b.error.code ?? b.code).toBe('UNPRICED_FEATURE');
  });
});
