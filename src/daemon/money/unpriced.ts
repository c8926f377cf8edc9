import { AgwError } from '../../shared/errors.js';

/**
 * What a provider bills beyond the tokens agw prices (review M1), so a call asking for it
 * would be charged less than it costs: a priority (or scale) service tier, background
 * responses (run and billed after the call is answered), server tools billed per use (web
 * and file search, code execution containers, image generation, Google Search grounding,
 * xAI Live Search), and Bedrock's priority tier, latency-optimized inference and guardrails.
 * Such a call is refused with 400 UNPRICED_FEATURE before the upstream, free. The standard
 * tiers (`auto`, `default`, `flex`) pass and are charged at the standard price.
 * Unified chat leaves a priority tier out instead (translate/plan.ts), as it does with any
 * field a provider cannot honour; it refuses the rest like the proxy.
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The service tiers billed above the standard price (OpenAI's `priority`, `scale`; Bedrock's `priority`). */
export const DEARER_TIERS: ReadonlySet<unknown> = new Set(['priority', 'scale']);

/** Tool types billed per use on top of tokens (OpenAI, xAI, Anthropic's dated server tools). */
const FEE_TOOL = /^(web_search|file_search|code_interpreter|image_generation|code_execution|x_search)/;
/** Gemini tools billed per grounded prompt. */
const FEE_GEMINI_TOOL = new Set(['googleSearch', 'google_search', 'googleSearchRetrieval', 'google_search_retrieval', 'googleMaps', 'google_maps', 'enterpriseWebSearch', 'enterprise_web_search']);

/** Request headers that buy Bedrock inference above the standard price (or a guardrail, billed per text unit). */
function bedrockHeader(name: string, value: string): boolean {
  if (name === 'x-amzn-bedrock-service-tier') return DEARER_TIERS.has(value.trim().toLowerCase());
  if (name === 'x-amzn-bedrock-performanceconfig-latency') return value.trim().toLowerCase() !== 'standard';
  return name === 'x-amzn-bedrock-guardrailidentifier' || name === 'x-amzn-bedrock-guardrailversion';
}

/** The feature of a request body (and, on the proxy, its headers) that agw does not price, if any. */
export function unpricedFeature(body: Obj | undefined, headers?: Readonly<Record<string, string | string[] | undefined>>): string | undefined {
  if (headers) {
    for (const [name, v] of Object.entries(headers)) {
      if (name.startsWith('x-amzn-bedrock-') && v !== undefined && bedrockHeader(name, Array.isArray(v) ? v.join(',') : v)) return name;
    }
  }
  if (!body) return undefined;
  if (DEARER_TIERS.has(body.service_tier)) return 'service_tier';
  if (body.background === true) return 'background';
  if (body.web_search_options !== undefined && body.web_search_options !== null) return 'web_search_options';
  if (isObj(body.search_parameters) && body.search_parameters.mode !== 'off') return 'search_parameters';
  if (Array.isArray(body.tools)) {
    for (const t of body.tools) {
      if (!isObj(t)) continue;
      if (typeof t.type === 'string' && FEE_TOOL.test(t.type)) return `tools.${t.type}`;
      for (const k of Object.keys(t)) if (FEE_GEMINI_TOOL.has(k)) return `tools.${k}`;
    }
  }
  // Bedrock Converse
  if (isObj(body.performanceConfig) && body.performanceConfig.latency !== undefined && body.performanceConfig.latency !== 'standard') return 'performanceConfig';
  if (isObj(body.serviceTier) && DEARER_TIERS.has(body.serviceTier.type)) return 'serviceTier';
  if (body.guardrailConfig !== undefined && body.guardrailConfig !== null) return 'guardrailConfig';
  return undefined;
}

/** 400 UNPRICED_FEATURE: what was asked, and why agw does not serve it. */
export function unpricedError(feature: string, provider: string): AgwError {
  return new AgwError(
    'UNPRICED_FEATURE',
    `${feature} is billed by ${provider} beyond the token prices agw charges (a dearer service tier, a fee per use, or work billed after the call): leave it out; nothing was sent or charged`,
    { feature, provider },
    { 'x-should-retry': 'false' },
  );
}
