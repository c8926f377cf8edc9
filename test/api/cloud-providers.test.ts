import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { usageTransactions } from '../helpers/gateway-fixture.js';
import { converseEvent, json, sigV4Problem, sigV4Scope, startMock, verifyAssertion, type Mock, type Seen } from '../helpers/cloud-mocks.js';
import { findModelPrice } from '../../src/shared/providers/index.js';
import { tokenCostNano } from '../../src/shared/money.js';

/**
 * CONTRACT "Cloud providers": azure-openai, bedrock and vertex as proxy providers against
 * loopback stand-ins that check each request as the cloud would (test/helpers/cloud-mocks.ts),
 * priced from the catalog, their secrets and derived credentials never reflected.
 */
const AZ_KEY = 'azure-test-key-0123456789abcdef';
const AWS = { accessKeyId: 'AKIDTESTEXAMPLE0001', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYTESTKEY', sessionToken: 'FwoGZXIvYXdzEBTESTSESSIONTOKEN0123456789' };
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const PUBLIC_PEM = publicKey.export({ type: 'spki', format: 'pem' }).toString();
const PRIVATE_PEM = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const SA_EMAIL = 'agw-test@agw-test-project.iam.gserviceaccount.com';

let azure: Mock;
let bedrock: Mock;
let vertex: Mock;
let tokensIssued: string[] = [];
let tokenLife = 3600;
const assertions: Record<string, unknown>[] = [];

const chatAnswer = (model: string) => ({
  id: 'chatcmpl-az',
  object: 'chat.completion',
  created: 1,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});

function bedrockHandler(s: Seen, res: import('node:http').ServerResponse): void {
  const problem = sigV4Problem(s, AWS.secretAccessKey);
  if (problem) return json(res, 403, { message: problem });
  if (s.url.includes('/model/echo/')) {
    // a provider that echoes what it got: agw must not pass the credentials on
    return json(res, 400, { message: `bad request: ${s.headers.authorization} token=${s.headers['x-amz-security-token']} secret=${AWS.secretAccessKey}` });
  }
  if (s.url.endsWith('/converse')) {
    return json(res, 200, {
      output: { message: { role: 'assistant', content: [{ text: 'hi' }] } },
      stopReason: 'end_turn',
      usage: { inputTokens: 20, outputTokens: 8, totalTokens: 158, cacheReadInputTokens: 100, cacheWriteInputTokens: 30 },
      metrics: { latencyMs: 3 },
    });
  }
  if (s.url.endsWith('/converse-stream')) {
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    res.write(converseEvent('messageStart', { role: 'assistant' }));
    res.write(converseEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello ' } }));
    const tail = Buffer.concat([
      converseEvent('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'there' } }),
      converseEvent('messageStop', { stopReason: 'end_turn' }),
      converseEvent('metadata', { usage: { inputTokens: 15, outputTokens: 4, totalTokens: 19 }, metrics: { latencyMs: 2 } }),
    ]);
    // split across writes in the middle of a frame: the tap keeps the unfinished one
    res.write(tail.subarray(0, 30));
    return void res.end(tail.subarray(30));
  }
  if (s.url.endsWith('/invoke')) {
    const body = JSON.parse(s.body) as { anthropic_version?: string };
    if (body.anthropic_version !== 'bedrock-2023-05-31') return json(res, 400, { message: 'anthropic_version is required' });
    return json(res, 200, { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 9, output_tokens: 3 } });
  }
  json(res, 404, { message: 'unknown operation' });
}

function vertexHandler(s: Seen, res: import('node:http').ServerResponse): void {
  if (s.url === '/token') {
    const form = new URLSearchParams(s.body);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') return json(res, 400, { error: 'unsupported_grant_type' });
    const v = verifyAssertion(form.get('assertion') ?? '', PUBLIC_PEM);
    if (!v.claims) return json(res, 400, { error: 'invalid_grant', error_description: v.problem });
    const c = v.claims;
    const now = Date.now() / 1000;
    if (c.iss !== SA_EMAIL || !String(c.scope).includes('https://www.googleapis.com/auth/cloud-platform') || typeof c.aud !== 'string' || Number(c.exp) <= now || Number(c.exp) - Number(c.iat) > 3600) {
      return json(res, 400, { error: 'invalid_grant', error_description: 'bad claims' });
    }
    assertions.push({ ...c, kid: v.header?.kid });
    const token = `ya29.test-access-token-${tokensIssued.length + 1}-abcdefghij`;
    tokensIssued.push(token);
    return json(res, 200, { access_token: token, expires_in: tokenLife, token_type: 'Bearer' });
  }
  const auth = String(s.headers.authorization ?? '');
  if (!tokensIssued.includes(auth.replace(/^Bearer /, ''))) return json(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.' } });
  if (s.url.includes('/models/echo')) return json(res, 400, { error: { code: 400, message: `you sent ${auth}` } });
  if (s.url.includes('/publishers/anthropic/') && s.url.endsWith(':rawPredict')) {
    return json(res, 200, { id: 'msg_v', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hi' }], usage: { input_tokens: 11, output_tokens: 5 } });
  }
  if (s.url.endsWith(':generateContent')) {
    return json(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: 'hi' }] } }], usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 6, totalTokenCount: 16 } });
  }
  json(res, 404, { error: { code: 404, message: 'not found' } });
}

const serviceAccount = (tokenUri: string) =>
  JSON.stringify({
    type: 'service_account',
    project_id: 'agw-test-project',
    private_key_id: 'kid-test-0001',
    private_key: PRIVATE_PEM,
    client_email: SA_EMAIL,
    token_uri: tokenUri,
  });

let d: TestDaemon;
beforeAll(async () => {
  azure = await startMock((s, res) => {
    if (s.headers['api-key'] !== AZ_KEY) return json(res, 401, { error: { code: '401', message: `Access denied due to invalid subscription key ${s.headers['api-key']}` } });
    json(res, 200, chatAnswer('gpt-4o-mini-2024-07-18'));
  });
  bedrock = await startMock(bedrockHandler);
  vertex = await startMock(vertexHandler);
  d = await startTestDaemon({
    yaml: `
providers:
  azure-openai:
    baseUrl: ${azure.url}
    apiKey: ${AZ_KEY}
    deployments: { gpt-4o-mini: chat-mini }
  bedrock:
    baseUrl: ${bedrock.url}
    region: us-west-2
    accessKeyId: ${AWS.accessKeyId}
    secretAccessKey: ${AWS.secretAccessKey}
    sessionToken: ${AWS.sessionToken}
  vertex:
    baseUrl: ${vertex.url}
    serviceAccount: '${serviceAccount(`${vertex.url}/token`)}'
`,
  });
});
afterAll(async () => {
  await d?.close();
  await Promise.all([azure?.close(), bedrock?.close(), vertex?.close()]);
});

async function record(id: string, key: string) {
  const r = await d.fetch(`/requests/${id}`, { key });
  expect(r.status).toBe(200);
  return (await r.json()) as Record<string, unknown>;
}
const post = (path: string, key: string, body: unknown) => d.fetch(`/external/${path}`, { method: 'POST', key, json: body });

describe('azure-openai', () => {
  test('an OpenAI path goes to the model’s deployment with the api-version and the key as api-key; priced from the catalog', async () => {
    const u = await d.user({ tier: 'free', balance: 5 });
    const res = await post('azure-openai/v1/chat/completions', u.key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    const s = azure.seen.at(-1)!;
    expect(s.url).toBe('/openai/deployments/chat-mini/chat/completions?api-version=2024-10-21');
    expect(s.headers['api-key']).toBe(AZ_KEY);
    expect(s.headers.authorization).toBeUndefined();
    const p = findModelPrice('azure-openai', 'gpt-4o-mini')!;
    const cost = Math.round((tokenCostNano(12, p.inputPer1M) + tokenCostNano(7, p.outputPer1M)) * 2);
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([-cost]);
    expect(await record(res.headers.get('x-request-id')!, u.key)).toMatchObject({ provider: 'azure-openai', model: 'gpt-4o-mini', promptTokens: 12, completionTokens: 7 });
  });

  test('Azure’s own path passes with its api-version kept or added; the deployment prices as its model; a key echoed back is redacted', async () => {
    const u = await d.user({ tier: 'free', balance: 5 });
    const res = await post('azure-openai/openai/deployments/chat-mini/chat/completions?api-version=2025-01-01-preview', u.key, { messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(azure.seen.at(-1)!.url).toBe('/openai/deployments/chat-mini/chat/completions?api-version=2025-01-01-preview');
    expect(await record(res.headers.get('x-request-id')!, u.key)).toMatchObject({ model: 'gpt-4o-mini' });
    const bare = await post('azure-openai/openai/deployments/chat-mini/chat/completions', u.key, { messages: [{ role: 'user', content: 'hi' }] });
    expect(bare.status).toBe(200);
    expect(azure.seen.at(-1)!.url).toBe('/openai/deployments/chat-mini/chat/completions?api-version=2024-10-21');
    // listing models (free): Azure's own list
    const models = await d.fetch('/external/azure-openai/v1/models', { key: u.key });
    expect(models.status).toBe(200);
    expect(azure.seen.at(-1)!).toMatchObject({ method: 'GET', url: '/openai/models?api-version=2024-10-21' });
    const none = await post('azure-openai/v1/chat/completions', u.key, { messages: [{ role: 'user', content: 'hi' }] });
    expect(none.status).toBe(400);
    expect((await none.json()).code).toBe('INVALID_REQUEST');
  });
});

describe('bedrock', () => {
  test('Converse: signed with SigV4 as AWS checks it (session token, region, service), usage with cache reads and writes', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const res = await post('bedrock/model/anthropic.claude-haiku-4-5-20251001-v1:0/converse', u.key, { messages: [{ role: 'user', content: [{ text: 'hi' }] }], inferenceConfig: { maxTokens: 100 } });
    expect(res.status, await res.clone().text()).toBe(200);
    const s = bedrock.seen.at(-1)!;
    expect(sigV4Problem(s, AWS.secretAccessKey)).toBeNull();
    expect(sigV4Scope(s)).toEqual({ accessKeyId: AWS.accessKeyId, region: 'us-west-2', service: 'bedrock' });
    expect(s.headers['x-amz-security-token']).toBe(AWS.sessionToken);
    expect(s.url).toBe('/model/anthropic.claude-haiku-4-5-20251001-v1%3A0/converse');
    const rec = await record(res.headers.get('x-request-id')!, u.key);
    expect(rec).toMatchObject({ provider: 'bedrock', model: 'anthropic.claude-haiku-4-5-20251001-v1:0', promptTokens: 150, cachedTokens: 100, cacheWriteTokens: 30, completionTokens: 8 });
    expect(rec.cost as number).toBeGreaterThan(0);
    // a signature the mock recomputes with another secret does not verify: the check can fail
    expect(sigV4Problem(s, `${AWS.secretAccessKey}x`)).toMatch(/signature mismatch/);
  });

  test('ConverseStream: the event stream passes through; usage from its metadata event', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const res = await post('bedrock/model/us.anthropic.claude-haiku-4-5-20251001-v1:0/converse-stream', u.key, { messages: [{ role: 'user', content: [{ text: 'hi' }] }] });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/vnd.amazon.eventstream');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.includes(Buffer.from('"metadata"'))).toBe(false); // the event type is a binary header, not JSON
    expect(bytes.includes(Buffer.from('there'))).toBe(true);
    // a geographic inference profile prices as the model in its region
    expect(await record(res.headers.get('x-request-id')!, u.key)).toMatchObject({ model: 'anthropic.claude-haiku-4-5-20251001-v1:0', promptTokens: 15, completionTokens: 4 });
  });

  test('InvokeModel with the Anthropic body; an upstream that echoes the credentials has them redacted', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const res = await post('bedrock/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke', u.key, { anthropic_version: 'bedrock-2023-05-31', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(await record(res.headers.get('x-request-id')!, u.key)).toMatchObject({ promptTokens: 9, completionTokens: 3 });
    const echo = await post('bedrock/model/echo/converse', u.key, { messages: [] });
    expect(echo.status).toBe(400);
    const text = await echo.text();
    const signature = /Signature=([0-9a-f]{64})/.exec(String(bedrock.seen.at(-1)!.headers.authorization))![1];
    expect(text).toContain('[redacted]');
    for (const secret of [signature, AWS.secretAccessKey, AWS.sessionToken, AWS.accessKeyId]) expect(text).not.toContain(secret);
  });
});

describe('vertex', () => {
  test('a service account’s token, fetched once at its token_uri (JWT assertion verified) and reused; Gemini by the short path', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const before = tokensIssued.length;
    for (let i = 0; i < 3; i++) {
      const res = await post('vertex/publishers/google/models/gemini-2.5-flash:generateContent', u.key, { contents: [{ role: 'user', parts: [{ text: `hi ${i}` }] }] });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(await record(res.headers.get('x-request-id')!, u.key)).toMatchObject({ provider: 'vertex', model: 'gemini-2.5-flash', promptTokens: 10, completionTokens: 6 });
    }
    expect(tokensIssued.length - before).toBe(1);
    expect(assertions.at(-1)).toMatchObject({ iss: SA_EMAIL, scope: 'https://www.googleapis.com/auth/cloud-platform' });
    const calls = vertex.seen.filter((s) => s.url !== '/token').slice(-3);
    for (const s of calls) {
      expect(s.url).toBe('/v1/projects/agw-test-project/locations/global/publishers/google/models/gemini-2.5-flash:generateContent');
      expect(s.headers.authorization).toBe(`Bearer ${tokensIssued.at(-1)}`);
    }
  });

  test('Claude on Vertex (rawPredict), priced from the catalog; an access token echoed back is redacted', async () => {
    const u = await d.user({ tier: 'pro', balance: 5 });
    const res = await post(
      'vertex/v1/projects/agw-test-project/locations/global/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
      u.key,
      { anthropic_version: 'vertex-2023-10-16', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
    );
    expect(res.status).toBe(200);
    const p = findModelPrice('vertex', 'claude-sonnet-4-5')!;
    const cost = Math.round((tokenCostNano(11, p.inputPer1M) + tokenCostNano(5, p.outputPer1M)) * 2);
    expect((await usageTransactions(d.daemon.ctx.db, u.id)).map((t) => t.amount)).toEqual([-cost]);
    const echo = await post('vertex/publishers/google/models/echo:generateContent', u.key, { contents: [] });
    expect(echo.status).toBe(400);
    const text = await echo.text();
    expect(text).toContain('[redacted]');
    for (const t of tokensIssued) expect(text).not.toContain(t);
  });

  test('the token is fetched again once it is about to expire', async () => {
    tokenLife = 64; // 4 s before the refresh margin of 60 s is reached
    const other = await startTestDaemon({
      yaml: `providers:\n  vertex:\n    baseUrl: ${vertex.url}\n    project: other-project\n    location: europe-west4\n    serviceAccount: '${serviceAccount(`${vertex.url}/token`)}'\n`,
    });
    try {
      const u = await other.user({ tier: 'pro', balance: 5 });
      const call = () => other.fetch('/external/vertex/models/gemini-2.5-flash:generateContent', { method: 'POST', key: u.key, json: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } });
      const before = tokensIssued.length;
      expect((await call()).status).toBe(200);
      expect((await call()).status).toBe(200);
      expect(tokensIssued.length - before).toBe(1);
      await new Promise((r) => setTimeout(r, 4500));
      expect((await call()).status).toBe(200);
      expect(tokensIssued.length - before).toBe(2);
      const last = vertex.seen.at(-1)!;
      expect(last.url).toBe('/v1/projects/other-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
      expect(last.headers.authorization).toBe(`Bearer ${tokensIssued.at(-1)}`);
    } finally {
      tokenLife = 3600;
      await other.close();
    }
  });
});
