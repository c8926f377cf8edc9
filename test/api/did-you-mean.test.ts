import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, publishJson } from './skills-helpers.js';

/** Issue #33 item 10: did-you-mean for model ids, aliases and skill slugs, naming the CLI command. */
let d: TestDaemon;
let u: TestUser;
beforeAll(async () => {
  d = await startTestDaemon();
  u = await d.user({ tier: 'pro', balance: 1 });
});
afterAll(async () => {
  await d?.close();
});

const chat = (model: string) => d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model, messages: [{ role: 'user', content: 'hi' }] } });

it('gpt-4o-mni: "Did you mean gpt-4o-mini?", and `agw aliases` named besides the API path', async () => {
  const res = await chat('gpt-4o-mni');
  expect(res.status).toBe(400);
  const body = await res.json();
  expect(body.error).toContain('Did you mean "gpt-4o-mini"?');
  expect(body.error).toContain('agw aliases');
  expect(body.details).toMatchObject({ field: 'model', reason: 'no_such_model', suggestions: ['gpt-4o-mini'] });
});

it('smart-standrd: the alias is suggested', async () => {
  const body = await (await chat('smart-standrd')).json();
  expect(body.details.suggestions).toEqual(['smart-standard']);
  expect(body.error).toContain('Did you mean "smart-standard"?');
});

it('nothing close: no suggestion', async () => {
  const body = await (await chat('totally-made-up-model')).json();
  expect(body.details.suggestions).toBeUndefined();
  expect(body.error).not.toContain('Did you mean');
});

it('weather-reprot: the published slug is suggested; a draft never is', async () => {
  const creator = await d.user({ tier: 'pro' });
  expect((await publishJson(d, creator.key, { slug: 'weather-report', version: '1.0.0', category: 'other' }, bundle('weather-report'))).status).toBe(200);
  const res = await d.fetch('/skills/by-slug/weather-reprot');
  expect(res.status).toBe(404);
  const body = await res.json();
  expect(body).toMatchObject({ code: 'SKILL_NOT_FOUND', details: { suggestions: ['weather-report'] } });
  expect(body.error).toBe('skill "weather-reprot" not found. Did you mean "weather-report"?');

  const id = (await (await d.fetch('/skills/by-slug/weather-report')).json()).id;
  expect((await d.fetch(`/skills/${id}`, { method: 'PATCH', key: creator.key, json: { status: 'draft' } })).status).toBe(200);
  const hidden = await (await d.fetch('/skills/by-slug/weather-reprot')).json();
  expect(hidden.details).toBeUndefined();
});
