import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { getJson, portalLogin } from '../helpers/portal.js';
import type { TestUser } from '../helpers/daemon.js';

/**
 * Issue 14 point 12: the catalog, the portal and the error say which models unified chat
 * serves and why a model is refused. Since issue #28 it serves every LLM provider of the
 * catalog, so what is refused is a model in no catalog or a provider without a key.
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
  it('a model of an LLM provider without a key here: 503 PROVIDER_KEY_MISSING with the reason, nothing sent', async () => {
    const before = f.openai.requests.length + f.anthropic.requests.length;
    for (const model of ['grok-3-mini', 'xai/grok-3-mini']) {
      const res = await chat(model);
      expect(res.status).toBe(503);
      const body = await res.json();
      expect(body).toMatchObject({ code: 'PROVIDER_KEY_MISSING', details: { reason: 'provider_without_key', provider: 'xai' } });
      expect(body.error).toContain('no API key is configured for xai');
    }
    expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
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
  const LLM = ['openai', 'anthropic', 'google', 'groq', 'mistral', 'deepseek', 'xai', 'together', 'cohere', 'azure-openai', 'bedrock', 'vertex'];

  it('GET /gateway/aliases: every LLM provider is served by unified chat (issue #28); no model is left to the proxy alone', async () => {
    const a = await (await f.d.fetch('/gateway/aliases', { key: u.key })).json();
    expect(a.unifiedChatProviders).toEqual(LLM);
    expect(a.allowedModels).toContainEqual({ provider: 'google', model: 'gemini-2.5-flash', band: expect.any(String) });
    expect(a.allowedModels).toContainEqual(expect.objectContaining({ provider: 'xai', model: 'grok-3-mini' }));
    expect(a.proxyModels).toEqual([]);
  });

  it('GET /portal/entitlements flags each allowed model: unified chat, key or not', async () => {
    const s = await portalLogin(f.d, u);
    const { body } = await getJson(f.d, '/portal/entitlements', s.cookie);
    expect(body.unifiedChatProviders).toEqual(LLM);
    // a model id may be served by several providers (gpt-4o-mini by openai and azure-openai)
    const byModel = new Map(body.allowedModels.map((m: { provider: string; model: string }) => [`${m.provider}/${m.model}`, m]));
    expect(byModel.get('openai/gpt-4o-mini')).toMatchObject({ provider: 'openai', unifiedChat: true, providerHasKey: true });
    expect(byModel.get('google/gemini-2.5-flash')).toMatchObject({ provider: 'google', unifiedChat: true, providerHasKey: true });
    expect(byModel.get('xai/grok-3-mini')).toMatchObject({ provider: 'xai', unifiedChat: true, providerHasKey: false });
    // the clouds are alias targets too (issue #30): unified chat, once they have credentials here
    expect(byModel.get('azure-openai/gpt-4o-mini')).toMatchObject({ provider: 'azure-openai', unifiedChat: true, providerHasKey: false });
  });
});
