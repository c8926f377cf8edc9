import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { PROVIDERS } from '../../src/shared/providers/index.js';

/**
 * Issue #2 point 5: GET /api/portal/providers/public serves the 21-provider catalog as the
 * spec's table says: retail = raw x effective margin, hasKey from config, no secret.
 */
const CATEGORIES = ['LLM', 'Image', 'Video', 'Audio', 'Search', '3D', 'Other'];
const OPENAI_KEY = 'sk-config-secret-000111';
const GROQ_KEY = 'gsk-env-secret-222333';

interface CatalogProvider {
  id: string;
  description: string;
  category: string;
  baseUrl: string;
  hasKey: boolean;
  effectiveMargin: number;
  pricing: {
    kind: 'llm' | 'units';
    currency: string;
    models: { model: string; inputPer1M: number; outputPer1M: number; cachedInputPer1M: number; inputPer1MRetail: number; outputPer1MRetail: number }[];
    units: { price: number; priceRetail: number }[];
    lastUpdated: string;
    sourceUrl: string;
  };
}

async function catalog(d: TestDaemon): Promise<{ text: string; providers: CatalogProvider[] }> {
  const res = await fetch(`${d.api}/portal/providers/public`); // no credentials
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, providers: JSON.parse(text).providers };
}

const close = (a: number, b: number) => expect(Math.abs(a - b)).toBeLessThan(1e-6);

describe('public catalog with the built-in defaults', () => {
  let d: TestDaemon;
  beforeAll(async () => (d = await startTestDaemon()));
  afterAll(() => d.close());

  it('lists all 24 providers (the spec\'s 21 and the third round\'s three clouds) with every field of the spec', async () => {
    const { providers } = await catalog(d);
    expect(providers).toHaveLength(24);
    expect(providers.map((p) => p.id).sort()).toEqual(Object.keys(PROVIDERS).sort());
    for (const p of providers) {
      expect(typeof p.description).toBe('string');
      expect(CATEGORIES).toContain(p.category);
      expect(new URL(p.baseUrl).protocol).toMatch(/^https?:$/);
      expect(p.hasKey).toBe(false);
      expect(p.effectiveMargin).toBe(2);
      expect(['llm', 'units']).toContain(p.pricing.kind);
      expect(p.pricing.currency).toBe('USD');
      expect(p.pricing.lastUpdated).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(new URL(p.pricing.sourceUrl).protocol).toBe('https:');
      expect(Array.isArray(p.pricing.models) && Array.isArray(p.pricing.units)).toBe(true);
      if (p.pricing.kind === 'llm') expect(p.pricing.models.length).toBeGreaterThan(0);
      else expect(p.pricing.units.length).toBeGreaterThan(0);
    }
    expect(new Set(providers.map((p) => p.category)).size).toBe(CATEGORIES.length);
  });

  it('retail prices are the raw prices times the default margin 2.0', async () => {
    for (const p of (await catalog(d)).providers) {
      for (const m of p.pricing.models) {
        close(m.inputPer1MRetail, m.inputPer1M * 2);
        close(m.outputPer1MRetail, m.outputPer1M * 2);
      }
      for (const u of p.pricing.units) close(u.priceRetail, u.price * 2);
    }
  });
});

describe('public catalog with config margin, a per-provider margin and keys from config and env', () => {
  let d: TestDaemon;
  beforeAll(
    async () =>
      (d = await startTestDaemon({
        yaml: `margin: 3\nproviders:\n  openai: { apiKey: ${OPENAI_KEY}, margin: 1.5 }\n`,
        env: { AGW_PROVIDER_GROQ_KEY: GROQ_KEY, AGW_PROVIDER_MISTRAL_BASE_URL: 'http://127.0.0.1:9/mistral' },
      })),
  );
  afterAll(() => d.close());

  it('effectiveMargin is the provider override, else the config margin; retail follows it', async () => {
    const { providers } = await catalog(d);
    for (const p of providers) {
      const margin = p.id === 'openai' ? 1.5 : 3;
      expect(p.effectiveMargin, p.id).toBe(margin);
      for (const m of p.pricing.models) {
        close(m.inputPer1MRetail, m.inputPer1M * margin);
        close(m.outputPer1MRetail, m.outputPer1M * margin);
      }
      for (const u of p.pricing.units) close(u.priceRetail, u.price * margin);
    }
    const gpt = providers.find((p) => p.id === 'openai')!.pricing.models.find((m) => m.model === 'gpt-4o-mini')!;
    expect(gpt).toMatchObject({ inputPer1M: 0.15, outputPer1M: 0.6 });
    close(gpt.outputPer1MRetail, 0.9);
  });

  it('hasKey is true only for providers with a key (config or AGW_PROVIDER_<ID>_KEY)', async () => {
    const withKey = (await catalog(d)).providers.filter((p) => p.hasKey).map((p) => p.id);
    expect(withKey.sort()).toEqual(['groq', 'openai']);
  });

  it('env base URL overrides show; no key ever appears in the body', async () => {
    const { text, providers } = await catalog(d);
    expect(providers.find((p) => p.id === 'mistral')!.baseUrl).toBe('http://127.0.0.1:9/mistral');
    expect(text).not.toContain(OPENAI_KEY);
    expect(text).not.toContain(GROQ_KEY);
    expect(text).not.toMatch(/apiKey/i);
  });
});
