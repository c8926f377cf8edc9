import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startGatewayFixture, usageRecords, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { usePostgres } from '../helpers/pg.js';

/**
 * A key's model allowlist on the three gateway routes (proxy, smart route, unified chat),
 * for concrete ids and aliases; refusals are 403 MODEL_NOT_ALLOWED, recorded in the
 * request log with the key. Gateway calls: SQLite until the PostgreSQL money engine lands.
 */
const messages = [{ role: 'user', content: 'hello' }];
let f: GatewayFixture;
let ada: TestUser;

async function keyWith(models: string[] | null, name = 'limited'): Promise<{ id: string; key: string }> {
  const r = await f.d.fetch('/keys', { method: 'POST', key: ada.key, json: { name, limits: { models } } });
  expect(r.status).toBe(200);
  return r.json();
}
const chat = (key: string, model: string) => f.d.fetch('/gateway/chat', { method: 'POST', key, json: { model, messages } });
const smart = (key: string, model: string) => f.d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key, json: { model, messages } });
const proxy = (key: string, provider: 'openai' | 'anthropic', model: string) =>
  f.d.fetch(provider === 'openai' ? '/external/openai/v1/chat/completions' : '/external/anthropic/v1/messages', {
    method: 'POST',
    key,
    json: provider === 'openai' ? { model, messages } : { model, max_tokens: 64, messages },
  });

async function refused(res: Response, what: string): Promise<string> {
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(403);
  expect(body.code).toBe('MODEL_NOT_ALLOWED');
  expect(body.error).toContain(what);
  expect(body.error).toContain('not allowed for this key');
  const id = res.headers.get('x-request-id');
  expect(id).toBeTruthy();
  return id!;
}

describe.skipIf(usePostgres)('model allowlists on every gateway route', () => {
  beforeAll(async () => {
    // google only for the path-model check below: refused before it is ever contacted
    f = await startGatewayFixture({ env: { AGW_PROVIDER_GOOGLE_BASE_URL: 'http://127.0.0.1:9', AGW_PROVIDER_GOOGLE_KEY: 'g-test-0123456789' } });
    ada = await f.d.user({ tier: 'pro', balance: 20 });
  });
  afterAll(() => f?.close());

  test('an alias in the list: the alias, its targets by id, and only those', async () => {
    const k = await keyWith(['smart-lite']);
    expect((await chat(k.key, 'smart-lite')).status).toBe(200);
    expect((await chat(k.key, 'gpt-4o-mini')).status).toBe(200);
    expect((await chat(k.key, 'anthropic/claude-3-5-haiku-latest')).status).toBe(200);
    expect((await proxy(k.key, 'openai', 'gpt-4o-mini')).status).toBe(200);
    expect((await proxy(k.key, 'anthropic', 'claude-3-5-haiku-latest')).status).toBe(200);
    await refused(await chat(k.key, 'gpt-4o'), 'model gpt-4o');
    await refused(await chat(k.key, 'smart-pro'), 'alias smart-pro');
    await refused(await proxy(k.key, 'openai', 'gpt-4o'), 'model gpt-4o');
    await refused(await proxy(k.key, 'anthropic', 'claude-sonnet-4-5'), 'model claude-sonnet-4-5');
    // the same calls with the account's unlimited key pass
    expect((await chat(ada.key, 'gpt-4o')).status).toBe(200);
    expect((await proxy(ada.key, 'openai', 'gpt-4o')).status).toBe(200);
  });

  test('an alias not in the list resolves only among the targets the key allows', async () => {
    const k = await keyWith(['claude-3-5-haiku-latest']);
    const res = await chat(k.key, 'smart-lite'); // the tier would pick openai/gpt-4o-mini first
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-resolved-provider')).toBe('anthropic');
    expect(res.headers.get('x-service-resolved-model')).toBe('claude-3-5-haiku-latest');
    expect(res.headers.get('x-service-resolved-via-alias')).toBe('1');
    await refused(await chat(k.key, 'smart-standard'), 'alias smart-standard');
  });

  test('smart route: a class in the list uses all its candidates; otherwise only the allowed ones, none → 403', async () => {
    const cls = await keyWith(['best-cheap-llm']);
    expect((await smart(cls.key, 'best-cheap-llm')).headers.get('x-smart-route-model')).toBe('gpt-4o-mini');
    await refused(await smart(cls.key, 'best-quality-llm'), 'best-quality-llm');

    const one = await keyWith(['anthropic/claude-3-5-haiku-latest']);
    const res = await smart(one.key, 'best-cheap-llm'); // cheapest is openai/gpt-4o-mini, outside the list
    expect(res.status).toBe(200);
    expect(res.headers.get('x-smart-route-provider')).toBe('anthropic');
    expect(res.headers.get('x-smart-route-model')).toBe('claude-3-5-haiku-latest');
    await refused(await smart(one.key, 'best-quality-llm'), 'best-quality-llm');
  });

  test('a proxy call that names no model is refused for a key with a list; GETs (free, no model) pass', async () => {
    const k = await keyWith(['gpt-4o-mini']);
    const res = await f.d.fetch('/external/openai/v1/embeddings', { method: 'POST', key: k.key, json: { input: 'x' } });
    await refused(res, 'names no model');
    expect((await f.d.fetch('/external/openai/v1/models', { key: k.key })).status).not.toBe(403);
  });

  test('a model in the path (Gemini style) is the one checked: an allowed model in the body does not let another through', async () => {
    const k = await keyWith(['gpt-4o-mini']);
    const res = await f.d.fetch('/external/google/v1beta/models/o3:generateContent', { method: 'POST', key: k.key, json: { model: 'gpt-4o-mini', contents: [] } });
    await refused(res, 'model o3');
  });

  test('refusals are in the request log with the key, free; nothing is charged', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const r = await f.d.fetch('/keys', { method: 'POST', key: u.key, json: { name: 'lite', limits: { models: ['smart-lite'] } } });
    const k = (await r.json()) as { id: string; key: string };
    const ids = [
      await refused(await chat(k.key, 'smart-pro'), 'smart-pro'),
      await refused(await smart(k.key, 'best-quality-llm'), 'best-quality-llm'),
      await refused(await proxy(k.key, 'openai', 'o3'), 'model o3'),
    ];
    const recs = await usageRecords(f.db, u.id, { refused: true });
    expect(recs.map((x) => x.id).sort()).toEqual([...ids].sort());
    for (const rec of recs) expect(rec).toMatchObject({ status: 'refused', answerStatus: 403, code: 'MODEL_NOT_ALLOWED', customer: 0 });
    const byKey = await f.db.all<{ key_id: string }>('SELECT key_id FROM usage_records WHERE user_id = ?', [u.id]);
    expect(byKey.every((x) => x.key_id === k.id)).toBe(true);
    expect(recs.map((x) => x.alias ?? x.model).sort()).toEqual(['best-quality-llm', 'o3', 'smart-pro']);
  });

  test('entitlements of a key with a list show only the aliases it may call, and the key', async () => {
    const k = await keyWith(['smart-lite', 'claude-haiku-4-5']);
    const e = await (await f.d.fetch('/gateway/entitlements', { key: k.key })).json();
    expect(e.models).toEqual([
      { alias: 'smart-lite', provider: 'openai', modelId: 'gpt-4o-mini' },
      { alias: 'smart-standard', provider: 'anthropic', modelId: 'claude-haiku-4-5' },
    ]);
    expect(e.key).toMatchObject({ id: k.id, limits: { models: ['smart-lite', 'claude-haiku-4-5'], budget: null }, budgetRemaining: null });
    const all = await (await f.d.fetch('/gateway/entitlements', { key: ada.key })).json();
    expect(all.key).toBeUndefined();
    expect(all.models.length).toBeGreaterThan(2);
  });
});
