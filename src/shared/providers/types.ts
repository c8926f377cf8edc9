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
  | { style: 'query'; param: string }; // ?key=<key>

/** How the cost of one answer is read off it. */
export type UsageFormat =
  | 'openai' // usage.prompt_tokens / completion_tokens (JSON) or the final SSE chunk's usage
  | 'anthropic' // usage.input_tokens / output_tokens; SSE: message_start + message_delta usage
  | 'gemini' // usageMetadata.promptTokenCount / candidatesTokenCount
  | 'cohere' // meta.billed_units.input_tokens / output_tokens (v1) or usage.billed_units (v2)
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

/** The API format of a provider's chat endpoint, as unified chat and the smart route call it. */
export type ChatFormat = 'common' | 'messages' | 'gemini';

/**
 * How unified chat and the smart route call an LLM provider (its chat endpoint is
 * `chatPath`): the format, and what of the common format it does not take, per its API
 * reference (`reference`). What it does not take is dropped and named
 * (X-Service-Dropped-Params), or refused in strict mode.
 */
export interface ChatApi {
  format: ChatFormat;
  /** common-format request fields the API does not take */
  unsupported?: readonly string[];
  /** common-format fields it takes under another name */
  renamed?: Readonly<Record<string, string>>;
  /** the models that take reasoning settings (reasoning_effort, thinking, thinkingConfig); for others they are dropped */
  reasoningModels?: RegExp;
  /** the models that honour a JSON schema for their answer (response_format json_schema); absent: every model */
  jsonSchemaModels?: RegExp;
  /** the API reference these rules come from */
  reference: string;
}

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
  /** For chat providers: the path of their chat endpoint (used by smart routing / unified chat; `{model}` is the model id). */
  chatPath?: string;
  /** For chat providers: the format of that endpoint and what it takes (unified chat, the smart route). */
  chat?: ChatApi;
  pricing: ProviderPricing;
}
