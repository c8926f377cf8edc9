import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { getJson, portalLogin } from '../helpers/portal.js';
import type { TestUser } from '../helpers/daemon.js';

/**
 * Issue 14 point 12: the portal listed every provider's models as "allowed" while unified
 * chat serves only the two chat providers and answered `400 unknown model gemini-2.5-flash`.
 * Now the catalog, the portal and the error say which models unified chat serves, that the
 * others go through the proxy, and why a model is refused.
 */
let f: GatewayFixture;
let u: TestUser;
beforeAll(async () => {
  // google has a key (reachable through the proxy), xai has none
  f = await startGatewayFixture({ env: { AGW_PROVIDER_GOOGLE_KEY: 'g-test-key-0123456789' } });
  u = await f.d.user({ tier: 'pro', balance: 1 });
});
afterAll(async () => {
  await f?.close();
});

const messages = [{ role: 'user', content: 'hi' }];
const chat = (model: string) => f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model, messages } });

describe('unified chat names why it refuses a model', () => {
  it('a model of another provider: not served by unified chat, reached through the proxy (400, nothing sent)', async () => {
    const before = f.openai.requests.length + f.anthropic.requests.length;
    for (const model of ['gemini-2.5-flash', 'google/gemini-2.5-flash']) {
      const res = await chat(model);
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.code).toBe('INVALID_REQUEST');
      expect(body.error).toContain('unified chat does not serve');
      expect(body.error).toContain('/api/external/google/');
      expect(body.details).toMatchObject({ field: 'model', reason: 'not_served_by_unified_chat', provider: 'google', providerHasKey: true, proxy: '/api/external/google/' });
    }
    expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
  });

  it('a model of another provider without a key here says so too', async () => {
    const body = await (await chat('grok-3-mini')).json();
    expect(body.details).toMatchObject({ reason: 'not_served_by_unified_chat', provider: 'xai', providerHasKey: false });
    expect(body.error).toContain('no API key is configured for xai');
  });

  it('a model in no catalog: no such model', async () => {
    const body = await (await chat('gpt-9-imaginary')).json();
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.error).toContain('no such model');
    expect(body.details).toMatchObject({ field: 'model', reason: 'no_such_model' });
  });

  it('a chat provider without a key: the spec’s 503 code, with the reason', async () => {
    const g = await startGatewayFixture({ openaiKey: false });
    try {
      const v = await g.d.user({ tier: 'pro', balance: 1 });
      const res = await g.d.fetch('/gateway/chat', { method: 'POST', key: v.key, json: { model: 'gpt-4o-mini', messages } });
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ code: 'ALPHA_KEY_MISSING', details: { reason: 'provider_without_key', provider: 'openai' } });
    } finally {
      await g.close();
    }
  });
});

describe('the catalog and the portal say which models unified chat serves', () => {
  it('GET /gateway/aliases: allowedModels are unified chat’s; the tier’s other models are listed with their proxy path', async () => {
    const a = await (await f.d.fetch('/gateway/aliases', { key: u.key })).json();
    expect(a.unifiedChatProviders).toEqual(['openai', 'anthropic']);
    expect(a.allowedModels.every((m: { provider: string }) => ['openai', 'anthropic'].includes(m.provider))).toBe(true);
    expect(a.proxyModels).toContainEqual({ provider: 'google', model: 'gemini-2.5-flash', band: expect.any(String), proxy: '/api/external/google/', providerHasKey: true });
    expect(a.proxyModels).toContainEqual(expect.objectContaining({ provider: 'xai', providerHasKey: false }));
    expect(a.proxyModels.some((m: { provider: string }) => ['openai', 'anthropic'].includes(m.provider))).toBe(false);
  });

  it('GET /portal/entitlements flags each allowed model: unified chat or proxy, key or not', async () => {
    const s = await portalLogin(f.d, u);
    const { body } = await getJson(f.d, '/portal/entitlements', s.cookie);
    expect(body.unifiedChatProviders).toEqual(['openai', 'anthropic']);
    // a model id may be served by several providers (gpt-4o-mini by openai and azure-openai)
    const byModel = new Map(body.allowedModels.map((m: { provider: string; model: string }) => [`${m.provider}/${m.model}`, m]));
    expect(byModel.get('openai/gpt-4o-mini')).toMatchObject({ provider: 'openai', unifiedChat: true, providerHasKey: true });
    expect(byModel.get('azure-openai/gpt-4o-mini')).toMatchObject({ unifiedChat: false, providerHasKey: false });
    expect(byModel.get('google/gemini-2.5-flash')).toMatchObject({ provider: 'google', unifiedChat: false, providerHasKey: true });
    expect(byModel.get('xai/grok-3-mini')).toMatchObject({ provider: 'xai', unifiedChat: false, providerHasKey: false });
    // unified chat's first
    const flags = body.allowedModels.map((m: { unifiedChat: boolean }) => m.unifiedChat);
    expect(flags).toEqual([...flags].sort((a: boolean, b: boolean) => Number(b) - Number(a)));
  });
});
