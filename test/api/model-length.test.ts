import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaUsed, startGatewayFixture, usageRecords, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';

/**
 * Review finding M6: the model string is bounded (256 characters) on every chat door and the
 * proxy, so a 2 MB model is a short 400 INVALID_REQUEST naming `model`, not a 2 MB error
 * message and a 2 MB row in the request log; and a refused call whose model names an
 * unknown provider (`evil/…`) is not recorded as a call to a provider called "evil".
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture({ yaml: 'aliases:\n  to-gpt: [ { provider: openai, model: gpt-4o-mini } ]\n' });
});
afterAll(async () => {
  await f?.close();
});

const HUGE = `evil/${'m'.repeat(2 * 1024 * 1024)}`;
const messages = [{ role: 'user', content: 'hi' }];

const DOORS: { path: string; body: Record<string, unknown>; param: (b: any) => unknown }[] = [
  { path: '/gateway/chat', body: { messages }, param: (b) => b.details?.field },
  { path: '/gateway/v1/chat/completions', body: { messages }, param: (b) => b.error?.param },
  { path: '/gateway/v1/messages', body: { max_tokens: 10, messages }, param: (b) => b.error?.details?.field },
  { path: '/gateway/v1/messages/count_tokens', body: { messages }, param: (b) => b.error?.details?.field },
  { path: '/external/openai/v1/chat/completions', body: { messages }, param: (b) => b.details?.field },
];

describe('a 2 MB model string', () => {
  it.each(DOORS)('$path: a short 400 INVALID_REQUEST naming model; nothing sent, reserved or logged with it', async (door) => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const before = f.openai.requests.length + f.anthropic.requests.length;
    const res = await f.d.fetch(door.path, { method: 'POST', key: u.key, json: { ...door.body, model: HUGE } });
    const text = await res.text();
    expect(res.status, text.slice(0, 300)).toBe(400);
    expect(text.length).toBeLessThan(2000);
    expect(text).toContain('INVALID_REQUEST');
    expect(door.param(JSON.parse(text))).toBe('model');
    expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    expect((await walletRow(f.db, u.id)).balance).toBe(1_000_000_000);
    const log = await (await f.d.fetch('/requests', { key: u.key })).text();
    expect(log.length).toBeLessThan(5000);
    expect(log).not.toContain('mmmmmmmmmm'.repeat(30));
  });

  it('a model of 256 characters is still an ordinary unknown model (400 naming it, recorded)', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'x'.repeat(256), messages } });
    expect(res.status).toBe(400);
    expect((await res.json()).details).toMatchObject({ field: 'model', reason: 'no_such_model' });
    expect((await usageRecords(f.db, u.id, { refused: true })).map((r) => r.model)).toEqual(['x'.repeat(256)]);
  });
});

describe('a refused model naming an unknown provider', () => {
  it('is recorded with the model as asked and no provider called "evil"', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'evil/mmm', messages } });
    expect(res.status).toBe(400);
    const rec = await (await f.d.fetch(`/requests/${res.headers.get('x-request-id')}`, { key: u.key })).json();
    expect(rec).toMatchObject({ status: 400, code: 'INVALID_REQUEST', model: 'evil/mmm', alias: null });
    expect(rec.provider).not.toBe('evil');
    expect((await (await f.d.fetch('/requests?provider=evil', { key: u.key })).json()).items).toEqual([]);
  });

  it('a known provider prefix is still recorded as that provider', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'anthropic/no-such-claude', messages } });
    expect(res.status).toBe(400);
    const rec = await (await f.d.fetch(`/requests/${res.headers.get('x-request-id')}`, { key: u.key })).json();
    expect(rec).toMatchObject({ provider: 'anthropic', model: 'no-such-claude' });
  });
});
