import { describe, it, expect } from 'vitest';
import {
  PROVIDERS,
  PROVIDER_IDS,
  USAGE_TYPES,
  findModelPrice,
  findUnitPrice,
  getProvider,
  type ProviderCategory,
  type ProviderDef,
} from '../../src/shared/providers/index.js';

const ALL: [string, ProviderDef][] = Object.entries(PROVIDERS);
const CATEGORIES: ProviderCategory[] = ['LLM', 'Image', 'Video', 'Audio', 'Search', '3D', 'Other'];
const BANDS = ['lite', 'standard', 'pro', 'premium'];

function prices(def: ProviderDef): number[] {
  const p = def.pricing;
  return p.kind === 'llm'
    ? p.models.flatMap((m) => [m.inputPer1M, m.outputPer1M, m.cachedInputPer1M])
    : p.units.map((u) => u.price);
}

describe('provider catalog shape', () => {
  // the spec's 21, and the third round's three clouds (CONTRACT "Cloud providers")
  it('has exactly 24 providers, all listed in PROVIDER_IDS', () => {
    expect(ALL).toHaveLength(24);
    expect(PROVIDER_IDS).toHaveLength(24);
    expect(new Set(PROVIDER_IDS)).toEqual(new Set(Object.keys(PROVIDERS)));
  });

  it('covers all 7 categories', () => {
    const seen = new Set(ALL.map(([, d]) => d.category));
    for (const c of CATEGORIES) expect(seen, c).toContain(c);
    expect(seen.size).toBe(CATEGORIES.length);
  });

  it('has unique ids equal to their keys', () => {
    for (const [key, def] of ALL) expect(def.id).toBe(key);
    expect(new Set(ALL.map(([, d]) => d.id)).size).toBe(ALL.length);
  });

  it('uses https base URLs without a trailing slash, query or fragment', () => {
    for (const [id, def] of ALL) {
      const url = new URL(def.baseUrl);
      expect(url.protocol, id).toBe('https:');
      expect(def.baseUrl.endsWith('/'), id).toBe(false);
      expect(url.search + url.hash, id).toBe('');
    }
  });

  it('has a name, a one-sentence description and a known usage type', () => {
    for (const [id, def] of ALL) {
      expect(def.name.length, id).toBeGreaterThan(0);
      expect(def.description, id).toMatch(/^[A-Z0-9].*\.$/);
      expect(USAGE_TYPES, id).toContain(def.usageType);
    }
  });

  it('has well-formed auth, chat paths and pricing metadata', () => {
    for (const [id, def] of ALL) {
      if (def.auth.style === 'header') expect(def.auth.header, id).toMatch(/^[A-Za-z0-9-]+$/);
      if (def.chatPath !== undefined) expect(def.chatPath, id).toMatch(/^\/\S+[^/]$/);
      expect(def.pricing.currency, id).toBe('USD');
      expect(def.pricing.lastUpdated, id).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(Number.isNaN(Date.parse(def.pricing.lastUpdated)), id).toBe(false);
      expect(new URL(def.pricing.sourceUrl).protocol, id).toBe('https:');
    }
  });

  it('has only finite, non-negative prices', () => {
    for (const [id, def] of ALL) {
      const list = prices(def);
      expect(list.length, id).toBeGreaterThan(0);
      for (const n of list) {
        expect(Number.isFinite(n), id).toBe(true);
        expect(n, id).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('prices LLM providers by model, everything else by unit', () => {
    for (const [id, def] of ALL) {
      expect(def.pricing.kind, id).toBe(def.category === 'LLM' ? 'llm' : 'units');
      expect(def.usageFormat === 'units', id).toBe(def.pricing.kind === 'units');
    }
  });

  it('gives LLM providers >= 2 models with valid bands, unique ids and cached <= input', () => {
    for (const [id, def] of ALL) {
      if (def.pricing.kind !== 'llm') continue;
      const models = def.pricing.models;
      expect(models.length, id).toBeGreaterThanOrEqual(2);
      expect(new Set(models.map((m) => m.model)).size, id).toBe(models.length);
      for (const m of models) {
        expect(BANDS, `${id}/${m.model}`).toContain(m.band);
        expect(m.cachedInputPer1M, `${id}/${m.model}`).toBeLessThanOrEqual(m.inputPer1M);
      }
    }
  });

  it('gives unit providers well-formed units', () => {
    for (const [id, def] of ALL) {
      if (def.pricing.kind !== 'units') continue;
      expect(def.pricing.units.length, id).toBeGreaterThan(0);
      for (const u of def.pricing.units) {
        expect(u.unit.length, id).toBeGreaterThan(0);
        expect(u.description.length, id).toBeGreaterThan(0);
        if (u.pathPrefix !== undefined) expect(u.pathPrefix, id).toMatch(/^\//);
        if (u.measure !== 'request') expect(u.countField, id).toBeTruthy();
        if (u.usageType !== undefined) expect(USAGE_TYPES, id).toContain(u.usageType);
      }
    }
  });

  it('never shadows a unit behind an earlier, shorter prefix', () => {
    for (const [id, def] of ALL) {
      if (def.pricing.kind !== 'units') continue;
      const units = def.pricing.units;
      units.forEach((u, i) => {
        if (u.pathPrefix === undefined) return;
        expect(findUnitPrice(id, u.pathPrefix), `${id} ${u.pathPrefix}`).toBe(units[i]);
      });
    }
  });
});

describe('required models and prices', () => {
  const openaiModels: [string, string, number, number, number][] = [
    ['gpt-4.1-nano', 'lite', 0.1, 0.4, 0.025],
    ['gpt-4o-mini', 'lite', 0.15, 0.6, 0.075],
    ['gpt-4.1-mini', 'standard', 0.4, 1.6, 0.1],
    ['gpt-4.1', 'pro', 2.0, 8.0, 0.5],
    ['gpt-4o', 'pro', 2.5, 10.0, 1.25],
    ['o3', 'premium', 2.0, 8.0, 0.5],
  ];
  const anthropicModels: [string, string, number, number, number][] = [
    ['claude-3-5-haiku-latest', 'lite', 0.8, 4.0, 0.08],
    ['claude-haiku-4-5', 'standard', 1.0, 5.0, 0.1],
    ['claude-sonnet-4-5', 'pro', 3.0, 15.0, 0.3],
    ['claude-opus-4-1', 'premium', 15.0, 75.0, 1.5],
  ];

  it.each(openaiModels)('openai %s is %s at %s/%s/%s', (model, band, input, output, cached) => {
    expect(findModelPrice('openai', model)).toMatchObject({
      model,
      band,
      inputPer1M: input,
      outputPer1M: output,
      cachedInputPer1M: cached,
    });
  });

  it.each(anthropicModels)('anthropic %s is %s at %s/%s/%s', (model, band, input, output, cached) => {
    expect(findModelPrice('anthropic', model)).toMatchObject({
      model,
      band,
      inputPer1M: input,
      outputPer1M: output,
      cachedInputPer1M: cached,
    });
  });

  it('every LLM model names its output limit (what a call without max_tokens is held for)', () => {
    for (const def of Object.values(PROVIDERS)) {
      if (def.pricing.kind !== 'llm') continue;
      for (const m of def.pricing.models) expect(m.maxOutputTokens, `${def.id}/${m.model}`).toBeGreaterThanOrEqual(1000);
    }
    expect(findModelPrice('openai', 'gpt-4o-mini')?.maxOutputTokens).toBe(16_384);
    expect(findModelPrice('anthropic', 'claude-sonnet-4-5')?.maxOutputTokens).toBe(64_000);
  });

  it('wires the openai and anthropic upstreams', () => {
    const o = PROVIDERS.openai;
    expect(o.baseUrl + o.chatPath).toBe('https://api.openai.com/v1/chat/completions');
    expect(o.auth).toEqual({ style: 'bearer' });
    expect(o.usageFormat).toBe('openai');
    const a = PROVIDERS.anthropic;
    expect(a.baseUrl + a.chatPath).toBe('https://api.anthropic.com/v1/messages');
    expect(a.auth).toEqual({ style: 'header', header: 'x-api-key' });
    expect(a.extraHeaders).toEqual({ 'anthropic-version': '2023-06-01' });
    expect(a.usageFormat).toBe('anthropic');
  });

  it('builds real chat endpoints for the OpenAI-compatible providers', () => {
    const chat = (id: keyof typeof PROVIDERS) => {
      const def: ProviderDef = PROVIDERS[id];
      return def.baseUrl + (def.chatPath ?? '');
    };
    expect(chat('groq')).toBe('https://api.groq.com/openai/v1/chat/completions');
    expect(chat('deepseek')).toBe('https://api.deepseek.com/chat/completions');
    expect(chat('mistral')).toBe('https://api.mistral.ai/v1/chat/completions');
    expect(chat('xai')).toBe('https://api.x.ai/v1/chat/completions');
    expect(chat('together')).toBe('https://api.together.xyz/v1/chat/completions');
  });
});

describe('getProvider', () => {
  it('returns catalog entries by id', () => {
    expect(getProvider('openai')).toBe(PROVIDERS.openai);
    expect(getProvider('elevenlabs')?.category).toBe('Audio');
  });

  it('ignores unknown ids and prototype keys', () => {
    for (const id of ['nope', '', 'OPENAI', 'constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(getProvider(id), id).toBeUndefined();
    }
  });
});

describe('findModelPrice', () => {
  it('returns undefined for unknown models, unknown providers and unit providers', () => {
    expect(findModelPrice('openai', 'gpt-9')).toBeUndefined();
    expect(findModelPrice('openai', 'constructor')).toBeUndefined();
    expect(findModelPrice('nope', 'gpt-4o')).toBeUndefined();
    expect(findModelPrice('anthropic', 'gpt-4o')).toBeUndefined();
    expect(findModelPrice('stability', 'gpt-4o')).toBeUndefined();
  });
});

describe('findUnitPrice', () => {
  it('matches by path prefix, including sub-paths', () => {
    const tts = findUnitPrice('elevenlabs', '/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM/stream');
    expect(tts).toMatchObject({ measure: 'chars', countField: 'text', unit: 'character' });
    expect(findUnitPrice('elevenlabs', '/v1/sound-generation')).toMatchObject({
      pathPrefix: '/v1/sound-generation',
      usageType: 'sound_effect',
    });
    expect(findUnitPrice('stability', '/v2beta/stable-image/generate/core')?.price).toBe(0.03);
  });

  it('prefers the first matching unit, so longer prefixes listed first win', () => {
    expect(findUnitPrice('bfl', '/v1/flux-pro-1.1-ultra')?.price).toBe(0.06);
    expect(findUnitPrice('bfl', '/v1/flux-pro-1.1')?.price).toBe(0.04);
    expect(findUnitPrice('bfl', '/v1/flux-pro')?.price).toBe(0.05);
    expect(findUnitPrice('luma', '/dream-machine/v1/generations/image')?.unit).toBe('image');
    expect(findUnitPrice('luma', '/dream-machine/v1/generations')?.unit).toBe('generation');
  });

  it('falls back to the first unit without a prefix', () => {
    const def = PROVIDERS.stability.pricing;
    const fallback = def.units.find((u) => u.pathPrefix === undefined);
    expect(fallback).toBeDefined();
    expect(findUnitPrice('stability', '/v2beta/something-new')).toBe(fallback);
  });

  it('reads field-measured units for video and per-image endpoints', () => {
    expect(findUnitPrice('runway', '/v1/image_to_video')).toMatchObject({ unit: 'second', measure: 'field', countField: 'duration' });
    expect(findUnitPrice('fal', '/fal-ai/flux/dev')).toMatchObject({ measure: 'field', countField: 'num_images' });
  });

  it('returns undefined for LLM and unknown providers', () => {
    expect(findUnitPrice('openai', '/v1/chat/completions')).toBeUndefined();
    expect(findUnitPrice('nope', '/x')).toBeUndefined();
    expect(findUnitPrice('constructor', '/x')).toBeUndefined();
  });

  it('gives every unit provider a price for any path', () => {
    for (const [id, def] of ALL) {
      if (def.pricing.kind !== 'units') continue;
      expect(findUnitPrice(id, '/definitely/not/a/known/path'), id).toBeDefined();
    }
  });
});
