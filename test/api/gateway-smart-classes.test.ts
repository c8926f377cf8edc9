import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';

/** Issue #33 item 9: the smart route names its classes when given another model, and lists them. */
let d: TestDaemon;
let u: TestUser;
beforeAll(async () => {
  d = await startTestDaemon();
  u = await d.user({ tier: 'free', balance: 1 });
});
afterAll(async () => {
  await d?.close();
});

const CLASSES = ['best-cheap-llm', 'best-fast-llm', 'best-quality-llm'];

it('a model that is not a class → 400 naming the classes, with the closest one', async () => {
  const res = await d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'best-chaep-llm', messages: [{ role: 'user', content: 'hi' }] } });
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body.code).toBe('INVALID_REQUEST');
  expect(body.error).not.toContain('must be equal to constant');
  for (const c of CLASSES) expect(body.error).toContain(c);
  expect(body.error).toContain('Did you mean "best-cheap-llm"?');
  expect(body.details).toMatchObject({ field: 'model', classes: CLASSES, suggestions: ['best-cheap-llm'] });

  const far = await (await d.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] } })).json();
  expect(far.error).toContain('"gpt-4o" is not a smart-route class');
  expect(far.details.suggestions).toBeUndefined();
});

it('GET /api/external/smart/v1/models lists the classes in the common shape; the OpenAI SDK reads it', async () => {
  const res = await d.fetch('/external/smart/v1/models', { key: u.key });
  expect(res.status).toBe(200);
  const body = await res.json();
  expect(body.object).toBe('list');
  expect(body.data.map((m: { id: string }) => m.id)).toEqual(CLASSES);
  expect(body.data[0]).toEqual({ id: 'best-cheap-llm', object: 'model', created: expect.any(Number), owned_by: 'agw' });

  const sdk = new OpenAI({ baseURL: `${d.api}/external/smart/v1`, apiKey: u.key, maxRetries: 0 });
  const ids: string[] = [];
  for await (const m of sdk.models.list()) ids.push(m.id);
  expect(ids).toEqual(CLASSES);
  expect((await d.fetch('/external/smart/v1/models')).status).toBe(401);
});

it('a key with a model list sees the classes it may call (listed, or with a candidate it allows)', async () => {
  // gpt-4.1-nano is a candidate of best-fast-llm only (the built-in classes)
  const made = await d.fetch('/keys', { method: 'POST', key: u.key, json: { name: 'nano only', limits: { models: ['gpt-4.1-nano'] } } });
  expect(made.status).toBe(200);
  const limited = (await made.json()).key;
  const body = await (await d.fetch('/external/smart/v1/models', { key: limited })).json();
  expect(body.data.map((m: { id: string }) => m.id)).toEqual(['best-fast-llm']);
});
