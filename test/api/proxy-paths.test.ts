import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { json, startMock, type Mock } from '../helpers/cloud-mocks.js';
import { quotaUsed, startGatewayFixture, usageRecords, usageTransactions, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';

/**
 * What the proxy forwards at all (review H1, M2): the provider accounts are shared by every
 * tenant, so only metered inference and GETs that reveal no tenant's data reach them
 * (catalog `proxyPaths`); a cloud's service account only in its configured project and
 * location. Anything else is 403 PROXY_PATH_NOT_ALLOWED (a POST recorded, free), batches 501.
 */
const AZ_KEY = 'azure-test-key-0123456789abcdef';
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

let f: GatewayFixture;
let azure: Mock;
let vertex: Mock;
let runway: Mock;
let google: Mock;
let mistral: Mock;
let bedrock: Mock;
const TOKEN = 'ya29.paths-test-token-0123456789';

beforeAll(async () => {
  azure = await startMock((s, res) => {
    if (s.method === 'GET') return json(res, 200, { data: [{ id: 'gpt-4o-mini' }] });
    json(res, 200, { id: 'x', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } });
  });
  vertex = await startMock((s, res) => {
    if (s.url === '/token') return json(res, 200, { access_token: TOKEN, expires_in: 3600, token_type: 'Bearer' });
    if (s.url.endsWith(':generateContent')) return json(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] } }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 } });
    // what the review saw: the project's other resources answer 200 to the service account
    json(res, 200, { name: 'projects/p/locations/us-central1/customJobs/1', state: 'JOB_STATE_PENDING' });
  });
  runway = await startMock((s, res) => json(res, 200, { id: 'task-1', status: 'SUCCEEDED', url: s.url }));
  google = await startMock((s, res) => json(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] } }], usageMetadata: { promptTokenCount: 4, candidatesTokenCount: 2 } }));
  mistral = await startMock((s, res) => json(res, 200, { id: 'c', object: 'chat.completion', model: 'mistral-small-latest', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } }));
  bedrock = await startMock((s, res) => json(res, 200, s.url.endsWith('/count-tokens') ? { inputTokens: 12 } : { output: { message: { role: 'assistant', content: [{ text: 'hi' }] } }, stopReason: 'end_turn', usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7 } }));
  const sa = JSON.stringify({ type: 'service_account', project_id: 'agw-proj', private_key_id: 'k1', private_key: PRIVATE_PEM, client_email: 'sa@agw-proj.iam.gserviceaccount.com', token_uri: `${vertex.url}/token` });
  f = await startGatewayFixture({
    yaml: `
providers:
  azure-openai:
    baseUrl: ${azure.url}
    apiKey: ${AZ_KEY}
    deployments: { gpt-4o-mini: chat-mini }
  vertex:
    baseUrl: ${vertex.url}
    location: us-central1
    serviceAccount: '${sa}'
  bedrock:
    baseUrl: ${bedrock.url}
    accessKeyId: AKIDPATHSTEST000001
    secretAccessKey: paths-test-secret-0123456789
`,
    env: {
      AGW_PROVIDER_RUNWAY_BASE_URL: runway.url,
      AGW_PROVIDER_RUNWAY_KEY: 'rw-key-0123456789',
      AGW_PROVIDER_GOOGLE_BASE_URL: google.url,
      AGW_PROVIDER_GOOGLE_KEY: 'g-key-0123456789',
      AGW_PROVIDER_MISTRAL_BASE_URL: mistral.url,
      AGW_PROVIDER_MISTRAL_KEY: 'm-key-0123456789',
    },
  });
});
afterAll(async () => {
  await f?.close();
  await Promise.all([azure, vertex, runway, google, mistral, bedrock].map((m) => m?.close()));
});

const post = (path: string, key: string, body: unknown = {}) => f.d.fetch(`/external/${path}`, { method: 'POST', key, json: body });
const get = (path: string, key: string) => f.d.fetch(`/external/${path}`, { key });

async function notAllowed(res: Response, method: string, path: string) {
  const text = await res.text();
  expect(res.status, text).toBe(403);
  expect(JSON.parse(text)).toMatchObject({ code: 'PROXY_PATH_NOT_ALLOWED', details: { method, path } });
}

const NOT_ALLOWED = [403, 'PROXY_PATH_NOT_ALLOWED'] as const;
const BATCH = [501, 'BATCH_NOT_METERED'] as const;

/** Nothing was charged or counted, and the refused POSTs are in the log (`refusals`: their status and code), free. */
async function nothingCharged(userId: string, refusals: readonly (readonly [number, string])[]) {
  expect(await usageTransactions(f.db, userId)).toEqual([]);
  expect(await quotaUsed(f.db, userId)).toBe(0);
  expect((await walletRow(f.db, userId)).balance).toBe(5_000_000_000);
  const recs = await usageRecords(f.db, userId, { refused: true });
  expect(recs.map((r) => [r.status, r.answerStatus, r.code, r.customer])).toEqual(refusals.map(([status, code]) => ['refused', status, code, 0]));
}

describe('Vertex: the service account reaches only publisher models in the configured project and location', () => {
  test('customJobs, endpoints, another project: 403 and never forwarded; batch prediction 501; inference still served', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const before = vertex.seen.filter((s) => s.url !== '/token').length;
    await notAllowed(await post('vertex/v1/projects/agw-proj/locations/us-central1/customJobs', u.key, { displayName: 'gpu', jobSpec: {} }), 'POST', '/v1/projects/agw-proj/locations/us-central1/customJobs');
    await notAllowed(await post('vertex/v1/projects/agw-proj/locations/us-central1/endpoints/123:deployModel', u.key, {}), 'POST', '/v1/projects/agw-proj/locations/us-central1/endpoints/123:deployModel');
    // another project the service account may reach, even for inference
    const other = await post('vertex/v1/projects/someone-else/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent', u.key, { contents: [] });
    await notAllowed(other, 'POST', '/v1/projects/someone-else/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent');
    await notAllowed(await get('vertex/v1/projects/agw-proj/locations/us-central1/endpoints', u.key), 'GET', '/v1/projects/agw-proj/locations/us-central1/endpoints');
    const batch = await post('vertex/v1/projects/agw-proj/locations/us-central1/batchPredictionJobs', u.key, {});
    expect(batch.status).toBe(501);
    expect((await batch.json()).code).toBe('BATCH_NOT_METERED');
    expect(vertex.seen.filter((s) => s.url !== '/token').length).toBe(before);
    await nothingCharged(u.id, [NOT_ALLOWED, NOT_ALLOWED, NOT_ALLOWED, BATCH]);
    const ok = await post('vertex/publishers/google/models/gemini-2.5-flash:generateContent', u.key, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(vertex.seen.at(-1)!.url).toBe('/v1/projects/agw-proj/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(vertex.seen.at(-1)!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });
});

describe('Azure OpenAI: inference on deployments only', () => {
  test('batches 501, fine-tuning and files 403, never forwarded; model list and chat still pass', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const before = azure.seen.length;
    const batch = await post('azure-openai/openai/batches', u.key, { input_file_id: 'file-1', endpoint: '/chat/completions', completion_window: '24h' });
    expect(batch.status).toBe(501);
    expect((await batch.json()).code).toBe('BATCH_NOT_METERED');
    await notAllowed(await post('azure-openai/openai/fine_tuning/jobs', u.key, { model: 'gpt-4o-mini', training_file: 'file-1' }), 'POST', '/openai/fine_tuning/jobs');
    await notAllowed(await get('azure-openai/openai/files/file-1/content', u.key), 'GET', '/openai/files/file-1/content');
    expect(azure.seen.length).toBe(before);
    await nothingCharged(u.id, [BATCH, NOT_ALLOWED]);
    expect((await get('azure-openai/v1/models', u.key)).status).toBe(200);
    const chat = await post('azure-openai/openai/deployments/chat-mini/chat/completions', u.key, { messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
  });
});

describe('every provider: GETs reveal no tenant’s data, POSTs are inference', () => {
  test('OpenAI: files, stored completions and responses, batches are not read through the shared key; fine-tuning is not started', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const before = f.openai.requests.length;
    for (const path of ['/v1/files/file-abc/content', '/v1/files', '/v1/chat/completions', '/v1/chat/completions/chatcmpl-1/messages', '/v1/responses/resp_1', '/v1/batches/batch_1']) {
      await notAllowed(await get(`openai${path}`, u.key), 'GET', path);
    }
    await notAllowed(await post('openai/v1/fine_tuning/jobs', u.key, { model: 'gpt-4o-mini', training_file: 'file-1' }), 'POST', '/v1/fine_tuning/jobs');
    await notAllowed(await post('openai/v1/audio/speech', u.key, { model: 'tts-1', input: 'hello', voice: 'alloy' }), 'POST', '/v1/audio/speech');
    expect(f.openai.requests.length).toBe(before);
    await nothingCharged(u.id, [NOT_ALLOWED, NOT_ALLOWED]);
    const models = await get('openai/v1/models', u.key);
    expect(models.status).toBe(200);
    expect((await models.json()).object).toBe('list');
  });

  test('a media provider: its job polled by id, free; the account’s other reads refused', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await get('runway/v1/tasks/task-1', u.key);
    expect(res.status).toBe(200);
    expect(runway.seen.at(-1)!.url).toBe('/v1/tasks/task-1');
    await notAllowed(await get('runway/v1/organization', u.key), 'GET', '/v1/organization');
    expect(runway.seen).toHaveLength(1);
    await nothingCharged(u.id, []);
  });
});

/** A raw request: fetch would normalise `//` and dot segments before sending. */
function rawPost(path: string, key: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const u = new URL(f.d.api);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: `${u.pathname}${path}`, method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode!, json: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('paths are matched as the provider reads them (review M2)', () => {
  test('repeated slashes and an encoded colon do not get a batch past its rule', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const m = await rawPost('/external/mistral//v1/batch/jobs', u.key, { input_files: ['f'], model: 'mistral-small-latest', endpoint: '/v1/chat/completions' });
    expect(m.status).toBe(501);
    expect(m.json).toMatchObject({ code: 'BATCH_NOT_METERED', details: { provider: 'mistral', path: '/v1/batch/jobs' } });
    const g = await rawPost('/external/google/v1beta/models/gemini-2.5-flash%3AbatchGenerateContent', u.key, { batch: {} });
    expect(g.status).toBe(501);
    expect(g.json).toMatchObject({ code: 'BATCH_NOT_METERED', details: { path: '/v1beta/models/gemini-2.5-flash:batchGenerateContent' } });
    expect(mistral.seen).toHaveLength(0);
    expect(google.seen).toHaveLength(0);
  });

  test('an encoded colon or doubled slash on an inference path goes upstream as the plain path, priced as its model', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const g = await rawPost('/external/google/v1beta//models/gemini-2.5-flash%3agenerateContent', u.key, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(g.status, JSON.stringify(g.json)).toBe(200);
    expect(google.seen.at(-1)!.url).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    const m = await rawPost('/external/mistral/v1//chat/completions', u.key, { model: 'mistral-small-latest', messages: [{ role: 'user', content: 'hi' }] });
    expect(m.status).toBe(200);
    expect(mistral.seen.at(-1)!.url).toBe('/v1/chat/completions');
    expect((await usageRecords(f.db, u.id)).map((r) => [r.provider, r.model])).toEqual([
      ['google', 'gemini-2.5-flash'],
      ['mistral', 'mistral-small-latest'],
    ]);
  });

  test('an encoded slash is refused (400), but inside a Bedrock model id (an inference profile’s ARN)', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const before = mistral.seen.length;
    const r = await rawPost('/external/mistral/v1%2Fbatch%2Fjobs', u.key, {});
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'path' } });
    const dots = await rawPost('/external/mistral/v1/%2E%2e/v1/batch/jobs', u.key, {});
    expect(dots.status).toBe(400);
    const arn = 'arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.amazon.nova-lite-v1%3A0';
    const b = await rawPost(`/external/bedrock/model/${arn}/converse`, u.key, { messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    expect(b.status, JSON.stringify(b.json)).toBe(200);
    expect(bedrock.seen.at(-1)!.url).toBe(`/model/${arn}/converse`);
    expect(mistral.seen).toHaveLength(before);
  });

  test('token counting on the clouds is free: Vertex countTokens and Claude’s count-tokens, Bedrock count-tokens', async () => {
    const u = await f.d.user({ tier: 'free', balance: 0 });
    const gem = await post('vertex/publishers/google/models/gemini-2.5-flash:countTokens', u.key, { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    expect(gem.status, await gem.clone().text()).toBe(200);
    const claude = await post('vertex/publishers/anthropic/models/count-tokens:rawPredict', u.key, { model: 'claude-sonnet-4-5@20250929', messages: [{ role: 'user', content: 'hi' }] });
    expect(claude.status).toBe(200);
    expect(vertex.seen.at(-1)!.url).toBe('/v1/projects/agw-proj/locations/us-central1/publishers/anthropic/models/count-tokens:rawPredict');
    const br = await post('bedrock/model/anthropic.claude-haiku-4-5-20251001-v1:0/count-tokens', u.key, { input: { converse: { messages: [] } } });
    expect(br.status).toBe(200);
    expect(await br.json()).toEqual({ inputTokens: 12 });
    expect(await usageRecords(f.db, u.id, { refused: true })).toEqual([]);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
  });
});
