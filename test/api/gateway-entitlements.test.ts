import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addOrgMember, createOrg, setOrgActive } from '../../src/daemon/store/orgs.js';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';

let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const USAGE_TYPES = ['ai_chat', 'image_generation', 'model_3d', 'tts', 'skybox', 'npc_generation', 'sound_effect'];
const chat = (key: string) => f.d.fetch('/gateway/chat', { method: 'POST', key, json: { model: 'smart-lite', messages: [{ role: 'user', content: 'hi' }] } });

describe('GET /api/gateway/entitlements', () => {
  it('answers every required field for the effective tier, with quotas for the current month', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 3, quotas: { image_generation: 7 } });
    expect((await chat(u.key)).status).toBe(200);
    const res = await f.d.fetch('/gateway/entitlements', { key: u.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, max-age=60');
    const e = await res.json();
    expect(Object.keys(e).sort()).toEqual(
      ['userId', 'tier', 'tierDisplayName', 'capabilities', 'modelBands', 'wallet', 'period', 'quotas', 'models', 'cacheTtlSeconds'].sort(),
    );
    expect(e).toMatchObject({ userId: u.id, tier: 'pro', tierDisplayName: 'Pro', modelBands: ['lite', 'standard', 'pro'], cacheTtlSeconds: 60 });
    expect(e.capabilities).toContain('chat');
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(e.period).toEqual({ start, end, resetsAt: end });
    expect(Object.keys(e.quotas).sort()).toEqual([...USAGE_TYPES].sort());
    expect(e.quotas.ai_chat).toEqual({ used: 1, limit: 5000, remaining: 4999, unlimited: false });
    expect(e.quotas.image_generation).toEqual({ used: 0, limit: 7, remaining: 7, unlimited: false });
    expect(e.wallet).toMatchObject({ balance: 3, currency: 'USD', unlimited: false, monthlyAllowance: 5, monthlyAllowanceResetsAt: end });
    expect(e.wallet.monthlyAllowanceUsed).toBeGreaterThan(0);
    expect(e.wallet.monthlyAllowanceRemaining).toBeCloseTo(5 - e.wallet.monthlyAllowanceUsed, 9);
    expect(e.models).toEqual([
      { alias: 'smart-lite', provider: 'openai', modelId: 'gpt-4o-mini' },
      { alias: 'smart-standard', provider: 'openai', modelId: 'gpt-4.1-mini' },
      { alias: 'smart-pro', provider: 'anthropic', modelId: 'claude-sonnet-4-5' },
    ]);
  });

  it('has a strong ETag; If-None-Match gives 304 until something changes', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const first = await f.d.fetch('/gateway/entitlements', { key: u.key });
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/); // quoted, no W/ prefix
    const again = await f.d.fetch('/gateway/entitlements', { key: u.key });
    expect(again.headers.get('etag')).toBe(etag);
    const cached = await f.d.fetch('/gateway/entitlements', { key: u.key, headers: { 'if-none-match': etag } });
    expect(cached.status).toBe(304);
    expect(await cached.text()).toBe('');
    expect(cached.headers.get('etag')).toBe(etag);
    expect(cached.headers.get('cache-control')).toBe('private, max-age=60');
    expect((await f.d.fetch('/gateway/entitlements', { key: u.key, headers: { 'if-none-match': `"other", ${etag}` } })).status).toBe(304);
    expect((await f.d.fetch('/gateway/entitlements', { key: u.key, headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
    expect((await chat(u.key)).status).toBe(200);
    const changed = await f.d.fetch('/gateway/entitlements', { key: u.key, headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('an active organization’s tier wins; -1 / unlimited for uncapped quotas', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const org = await f.db.tx(async (q) => {
      const o = await createOrg(q, { name: 'Acme', tier: 'enterprise' });
      await addOrgMember(q, o.id, u.id);
      return o;
    });
    const e = await (await f.d.fetch('/gateway/entitlements', { key: u.key })).json();
    expect(e.tier).toBe('enterprise');
    expect(e.modelBands).toContain('premium');
    for (const t of USAGE_TYPES) expect(e.quotas[t]).toEqual({ used: 0, limit: -1, remaining: -1, unlimited: true });
    expect(e.models.map((m: { alias: string }) => m.alias)).toContain('smart-premium');
    // the org tier also governs the unified chat allowlist
    const premium = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'smart-premium', messages: [{ role: 'user', content: 'hi' }] } });
    expect(premium.status).toBe(200);
    await f.db.tx((q) => setOrgActive(q, org.id, false));
    const after = await (await f.d.fetch('/gateway/entitlements', { key: u.key })).json();
    expect(after.tier).toBe('free');
    expect(after.quotas.ai_chat).toEqual({ used: 1, limit: 100, remaining: 99, unlimited: false });
  });

  it('401 without credentials or with a bad token', async () => {
    expect((await f.d.fetch('/gateway/entitlements')).status).toBe(401);
    const bad = await f.d.fetch('/gateway/entitlements', { key: 'not-a-token' });
    expect(bad.status).toBe(401);
    expect((await bad.json()).code).toBe('UNAUTHORIZED');
  });
});

describe('GET /api/gateway/aliases', () => {
  it('anonymous callers and invalid tokens get the free tier’s catalog, publicly cacheable for 300 s', async () => {
    for (const headers of [{}, { authorization: 'Bearer agw_bogus_token' }, { authorization: 'Bearer eyJ.not.a.jwt' }]) {
      const res = await f.d.fetch('/gateway/aliases', { headers });
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      const a = await res.json();
      expect(a.tier).toBe('free');
      expect(a.modelBands).toEqual(['lite']);
    }
  });

  it('is scoped to the caller’s tier: allowed flags, allowed models with bands, provider order', async () => {
    const u = await f.d.user({ tier: 'pro' });
    const a = await (await f.d.fetch('/gateway/aliases', { key: u.key })).json();
    // the spec's five fields, plus agw's two (docs/contract-additions.md)
    expect(Object.keys(a).sort()).toEqual(['aliases', 'allowedModels', 'modelBands', 'proxyModels', 'smartRouteProviderOrder', 'tier', 'unifiedChatProviders']);
    expect(a.tier).toBe('pro');
    const byAlias = Object.fromEntries(a.aliases.map((x: { alias: string }) => [x.alias, x]));
    expect(byAlias['smart-pro']).toEqual({
      alias: 'smart-pro',
      allowed: true,
      targets: [
        { provider: 'anthropic', model: 'claude-sonnet-4-5', allowed: true },
        { provider: 'openai', model: 'gpt-4o', allowed: true },
      ],
    });
    expect(byAlias['smart-premium'].allowed).toBe(false);
    expect(byAlias['smart-premium'].targets.every((t: { allowed: boolean }) => !t.allowed)).toBe(true);
    expect(a.allowedModels).toContainEqual({ provider: 'openai', model: 'gpt-4o', band: 'pro' });
    expect(a.allowedModels).toContainEqual({ provider: 'anthropic', model: 'claude-haiku-4-5', band: 'standard' });
    expect(a.allowedModels.some((m: { band: string }) => m.band === 'premium')).toBe(false);
    // only the providers with a key, cheapest retail price first
    expect(a.smartRouteProviderOrder).toEqual(['openai', 'anthropic']);
    const free = await (await f.d.fetch('/gateway/aliases')).json();
    expect(free.allowedModels.every((m: { band: string }) => m.band === 'lite')).toBe(true);
    expect(free.aliases.find((x: { alias: string }) => x.alias === 'smart-pro').allowed).toBe(false);
  });
});
