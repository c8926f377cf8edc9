/**
 * The provider catalog: one module per upstream, collected here. Lookups are backed by Maps
 * built once at module load, because pricing runs on every proxied call.
 */
import type { LlmModelPrice, ProviderDef, UnitPrice } from './types.js';
import { anthropic } from './anthropic.js';
import { azureOpenai } from './azure-openai.js';
import { bedrock } from './bedrock.js';
import { vertex } from './vertex.js';
import { bfl } from './bfl.js';
import { blockadelabs } from './blockadelabs.js';
import { cohere } from './cohere.js';
import { deepgram } from './deepgram.js';
import { deepseek } from './deepseek.js';
import { elevenlabs } from './elevenlabs.js';
import { exa } from './exa.js';
import { fal } from './fal.js';
import { google } from './google.js';
import { groq } from './groq.js';
import { luma } from './luma.js';
import { meshy } from './meshy.js';
import { mistral } from './mistral.js';
import { openai } from './openai.js';
import { runway } from './runway.js';
import { stability } from './stability.js';
import { tavily } from './tavily.js';
import { together } from './together.js';
import { tripo } from './tripo.js';
import { xai } from './xai.js';

export * from './types.js';

export const PROVIDERS = {
  // LLM
  openai,
  anthropic,
  google,
  groq,
  mistral,
  deepseek,
  xai,
  together,
  cohere,
  // LLM on the clouds (third round: CONTRACT "Cloud providers")
  'azure-openai': azureOpenai,
  bedrock,
  vertex,
  // Image
  stability,
  bfl,
  // Video
  runway,
  luma,
  // Audio
  elevenlabs,
  deepgram,
  // Search
  tavily,
  exa,
  // 3D
  meshy,
  tripo,
  // Other
  blockadelabs,
  fal,
} as const satisfies Record<string, ProviderDef>;

export type ProviderId = keyof typeof PROVIDERS;

export const PROVIDER_IDS = Object.keys(PROVIDERS) as ProviderId[];

const byId = new Map<string, ProviderDef>(Object.entries(PROVIDERS));

const modelPrices = new Map<string, Map<string, LlmModelPrice>>();
const unitPrices = new Map<string, { prefixed: UnitPrice[]; fallback: UnitPrice | undefined }>();
for (const [id, def] of byId) {
  const pricing = def.pricing;
  if (pricing.kind === 'llm') {
    modelPrices.set(id, new Map(pricing.models.map((m) => [m.model, m])));
  } else {
    unitPrices.set(id, {
      prefixed: pricing.units.filter((u) => u.pathPrefix !== undefined),
      fallback: pricing.units.find((u) => u.pathPrefix === undefined),
    });
  }
}

/** The provider with this id; only real catalog entries (never prototype keys such as "constructor"). */
export function getProvider(id: string): ProviderDef | undefined {
  return byId.get(id);
}

/** Raw price of one model of an LLM provider. */
export function findModelPrice(providerId: string, model: string): LlmModelPrice | undefined {
  return modelPrices.get(providerId)?.get(model);
}

/**
 * Unit price for a call to `path` (the provider's own path, starting with '/'): the first unit
 * whose pathPrefix the path starts with, else the first unit without a pathPrefix.
 */
export function findUnitPrice(providerId: string, path: string): UnitPrice | undefined {
  const entry = unitPrices.get(providerId);
  if (!entry) return undefined;
  const p = path.startsWith('/') ? path : `/${path}`;
  for (const unit of entry.prefixed) {
    if (p.startsWith(unit.pathPrefix as string)) return unit;
  }
  return entry.fallback;
}

const matches = (rules: readonly (string | RegExp)[] | undefined, path: string): boolean =>
  rules !== undefined && rules.some((r) => (typeof r === 'string' ? path.startsWith(r) : r.test(path)));

/**
 * True when a POST to `path` (the provider's own path) costs the provider nothing (its
 * `freePaths`: token counting). Such a call costs nothing and holds nothing (CONTRACT third
 * round: "Calls that cost the provider nothing … cost nothing"). Every route that forwards
 * a provider path asks here, so the rule lives in the catalog only.
 */
export function isFreePath(def: ProviderDef, path: string): boolean {
  return matches(def.freePaths, path);
}

/** True when a POST to `path` starts a batch job the proxy refuses (its `batchPaths`). */
export function isBatchPath(def: ProviderDef, path: string): boolean {
  return matches(def.batchPaths, path);
}

/**
 * True when the proxy forwards a `method` call to `path` (the provider's own path, after a
 * cloud's proxyTarget) at all: a GET only on the provider's `proxyPaths.get`; a POST on its
 * `proxyPaths.post` when it names them (free and batch paths are asked about first).
 */
export function proxyAllows(def: ProviderDef, method: 'GET' | 'POST', path: string): boolean {
  const rules = method === 'GET' ? def.proxyPaths?.get : def.proxyPaths?.post;
  if (rules === undefined) return method === 'POST';
  return rules.some((r) => r.test(path));
}

/** What a dated snapshot adds to its model's id: -2024-07-18, -20250929, @20250929, -v1:0, -001 (and their combinations). */
const SNAPSHOT_SUFFIX = /^(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@[\w.-]+|-v\d+(?::\d+)?|-\d{3})+$/;

/**
 * True when `id` is `model` or a dated snapshot of it (gpt-4o-mini-2024-07-18,
 * claude-sonnet-4-5@20250929): priced as `model`. Another product whose id merely starts with
 * it (o3-pro, gemini-2.5-flash-image, gpt-4o-mini-tts) is not: it is a model the catalog does
 * not know.
 */
export function isSnapshotOf(id: string, model: string): boolean {
  return id === model || (id.startsWith(model) && SNAPSHOT_SUFFIX.test(id.slice(model.length)));
}
