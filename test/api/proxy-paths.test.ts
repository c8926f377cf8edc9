import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { json, startMock, type Mock } from '../helpers/cloud-mocks.js';
import { quotaUsed, startGatewayFixture, usageRecords, usageTransactions, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { generateKeyPairSync } from 'node:crypto';

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
`,
    env: { AGW_PROVIDER_RUNWAY_BASE_URL: runway.url, AGW_PROVIDER_RUNWAY_KEY: 'rw-key-0123456789' },
  });
});
afterAll(async () => {
  await f?.close();
  await Promise.all([azure?.close(), vertex?.close(), runway?.close()]);
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
