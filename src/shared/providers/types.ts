/**
 * The provider catalog's types. One provider = one module in this folder that
 * exports a `ProviderDef`; `index.ts` collects them, checked by the type system.
 * The catalog drives pricing, routing, the proxy adapters and the public catalog.
 */

export type ProviderCategory = 'LLM' | 'Image' | 'Video' | 'Audio' | 'Search' | '3D' | 'Other';

export type ModelBand = 'lite' | 'standard' | 'pro' | 'premium';

/** The usage types that carry per-user quotas (spec: Entitlements.quotas keys). */
export type UsageType =
  | 'ai_chat'
  | 'image_generation'
  | 'model_3d'
  | 'tts'
  | 'skybox'
  | 'npc_generation'
  | 'sound_effect';

export const USAGE_TYPES: readonly UsageType[] = [
  'ai_chat',
  'image_generation',
  'model_3d',
  'tts',
  'skybox',
  'npc_generation',
  'sound_effect',
];

/** How agw authenticates to the upstream in place of the caller. */
export type ProviderAuth =
  | { style: 'bearer' } // Authorization: Bearer <key>
  | { style: 'header'; header: string; prefix?: string } // e.g. x-api-key: <key>, Authorization: Token <key>
  | { style: 'query'; param: string } // ?key=<key>
  | { style: 'aws-sigv4'; service: string } // AWS Signature V4 over each request (bedrock)
  | { style: 'google-service-account' }; // Authorization: Bearer <OAuth token from a service account> (vertex)

/** How the cost of one answer is read off it. */
export type UsageFormat =
  | 'openai' // usage.prompt_tokens / completion_tokens (JSON) or the final SSE chunk's usage
  | 'anthropic' // usage.input_tokens / output_tokens; SSE: message_start + message_delta usage
  | 'gemini' // usageMetadata.promptTokenCount / candidatesTokenCount
  | 'cohere' // meta.billed_units.input_tokens / output_tokens (v1) or usage.billed_units (v2)
  | 'bedrock' // Converse usage.inputTokens / outputTokens / cacheRead|WriteInputTokens, or an Anthropic body's usage
  | 'vertex' // Gemini's usageMetadata or, for Anthropic models, the messages format's usage
  | 'units'; // unit-priced: see UnitPrice

/** The output limit assumed for a model the catalog does not know (a call without max_tokens is held for it). */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768;

export interface LlmModelPrice {
  model: string;
  band: ModelBand;
  /** USD per 1M input tokens (raw, what the provider charges). */
  inputPer1M: number;
  /** USD per 1M output tokens (raw). */
  outputPer1M: number;
  /** USD per 1M cached input tokens (raw); equal to inputPer1M when the provider has no cache discount. */
  cachedInputPer1M: number;
  /**
   * The most output tokens one answer of this model can carry (the provider's documented
   * limit): a call that names no max_tokens is held for this many (money/hold.ts).
   */
  maxOutputTokens: number;
}

export interface UnitPrice {
  /** What one unit is: image, second, character, request, 1k-characters, minute, model, ... */
  unit: string;
  /** Raw USD per unit. */
  price: number;
  /** Human description ("one 1024x1024 image"). */
  description: string;
  /** Path prefix (after the provider base URL) this price applies to; first match wins; absent = any path. */
  pathPrefix?: string;
  /**
   * How many units a call consumed. 'request': 1 per call. 'chars': length of the request body's
   * `countField` string (text to speech). 'field': a number in the request body named `countField`
   * (n images, seconds of video), defaulting to 1.
   */
  measure: 'request' | 'chars' | 'field';
  countField?: string;
  /** Quota this unit consumes when it differs from the provider's `usageType` (e.g. sound effects on a TTS provider). */
  usageType?: UsageType;
}

interface PricingBase {
  currency: 'USD';
  /** ISO date (YYYY-MM-DD) the prices were last checked. */
  lastUpdated: string;
  /** Public pricing page the numbers come from. */
  sourceUrl: string;
}

export type ProviderPricing =
  | (PricingBase & { kind: 'llm'; models: LlmModelPrice[] })
  | (PricingBase & { kind: 'units'; units: UnitPrice[] });

export interface ProviderDef {
  id: string;
  /** Display name. */
  name: string;
  description: string;
  category: ProviderCategory;
  /** Real upstream base URL; the proxy appends the caller's path to it. */
  baseUrl: string;
  auth: ProviderAuth;
  /** Extra headers the upstream requires on every call (e.g. anthropic-version). */
  extraHeaders?: Record<string, string>;
  usageFormat: UsageFormat;
  /** The quota a call through this provider consumes. */
  usageType: UsageType;
  /** For chat providers: the path of their chat endpoint (used by smart routing / unified chat). */
  chatPath?: string;
  pricing: ProviderPricing;
  /**
   * Cloud providers: where a proxied call goes, completed from the provider's settings
   * (Azure's deployment and api-version, Vertex's project and location), and the model it
   * is priced as. Absent: the caller's path and query unchanged, the model from the path or body.
   */
  proxyTarget?: (call: ProxyCall, settings: CloudSettings) => ProxyTarget;
  /** Cloud providers as alias / smart-route targets: a chat-format body as this provider takes it (see ChatUpstream). */
  chatUpstream?: (format: ChatFormat, body: Record<string, unknown>, model: string, settings: CloudSettings) => ChatUpstream | undefined;
}

/** The settings of a cloud provider (config `providers.ID`), with their defaults applied. */
export interface CloudSettings {
  /** azure-openai: model id -> deployment name */
  deployments: Readonly<Record<string, string>>;
  apiVersion?: string;
  region?: string;
  project?: string;
  location?: string;
}

/** A proxied call as the caller sent it: the provider path, the raw query, the body's `model`. */
export interface ProxyCall {
  path: string;
  query: string;
  bodyModel: string | null;
}

/** Where it goes upstream, and the model it is priced as; `error`: refused with 400 INVALID_REQUEST. */
export type ProxyTarget = { path: string; query: string; model: string | null; error?: undefined } | { error: string };

/**
 * The upstream request of a call in one of the gateway's chat formats (the alias and
 * smart-route targets): path, query and body adapted to the provider; credentials are
 * added when it is sent. `undefined`: the provider does not take that format for that model.
 */
export type ChatFormat = 'common' | 'messages' | 'gemini';
export interface ChatUpstream {
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
  /** how the answer's usage is read, and whether a stream comes as AWS event stream frames */
  usageFormat: UsageFormat;
  eventStream: boolean;
}
