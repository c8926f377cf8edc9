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

/** The context window assumed for a model that names none (what provider-held context is held at). */
export const DEFAULT_CONTEXT_TOKENS = 1_048_576;

/**
 * A model's token prices, raw USD per 1M tokens (what the provider charges), one per class:
 * uncached input, cache reads, 5-minute and 1-hour cache writes, output (reasoning included).
 * A class a model does not price falls back to its input price (CONTRACT third round,
 * "Exact cost for every token class").
 */
export interface TokenPrices {
  inputPer1M: number;
  outputPer1M: number;
  /** cache reads; equal to inputPer1M when the provider has no cache discount */
  cachedInputPer1M: number;
  /** 5-minute cache writes (Anthropic: 1.25x input); absent: inputPer1M */
  cacheWritePer1M?: number;
  /** 1-hour cache writes (Anthropic: 2x input); absent: inputPer1M */
  cacheWrite1hPer1M?: number;
}

/**
 * Prices for calls whose prompt (every input-side token: uncached, cache reads and writes)
 * is strictly above `aboveInputTokens`: all the call's tokens are priced here (Gemini 2.5
 * Pro above 200k, Claude Sonnet with the 1M context). Classes it does not price fall back to
 * the tier's inputPer1M.
 */
export interface PriceTier extends Omit<TokenPrices, 'cachedInputPer1M'> {
  aboveInputTokens: number;
  cachedInputPer1M?: number;
}

export interface LlmModelPrice extends TokenPrices {
  model: string;
  band: ModelBand;
  /** dearer prices above a prompt size, ascending by threshold */
  tiers?: readonly PriceTier[];
  /**
   * The most output tokens one answer of this model can carry (the provider's documented
   * limit): a call's output cap is at most this (money/hold.ts).
   */
  maxOutputTokens: number;
  /** the model's context window in tokens: what context held at the provider is held at (money/hold.ts) */
  contextTokens: number;
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
  /**
   * the usage field its answers count cache hits in, when not the common shape's
   * `prompt_tokens_details.cached_tokens` (DeepSeek's `prompt_cache_hit_tokens`): restated
   * there for a caller who asked for the common shape (gateway/translate/cached-tokens.ts)
   */
  cachedTokensField?: string;
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
  /**
   * POST paths (after the base URL) that cost the provider nothing (token counting): the
   * proxy forwards them free, without a hold, a quota unit or a record (isFreePath). A
   * string is a path prefix; a RegExp is tested against the whole path.
   */
  freePaths?: readonly (string | RegExp)[];
  /**
   * POST paths that start work agw cannot meter per call (batch jobs, billed later at the
   * provider's batch price): the proxy refuses them with 501 BATCH_NOT_METERED (batchPath).
   */
  batchPaths?: readonly (string | RegExp)[];
  /**
   * What the proxy forwards at all (daemon/routes/proxy.ts, after a cloud's proxyTarget): the
   * provider account is shared by every tenant, so only what agw meters or what reveals no
   * tenant's data passes (proxyAllows). `post`: the inference paths a token-priced provider's
   * calls are metered on (absent: any POST, each priced by the provider's units); `get`: the
   * GETs forwarded free (model lists and model info; a media provider's documented polling of
   * one job by its id). Anything else: 403 PROXY_PATH_NOT_ALLOWED, never forwarded.
   */
  proxyPaths?: ProxyPaths;
  /**
   * Cloud providers: whose documented rule counts an image for `model` (the model's maker:
   * Azure's GPT models as OpenAI, Claude as Anthropic, Gemini as Google); undefined: no
   * documented rule (an image counts as any media part).
   */
  imageTokensAs?: (model: string) => 'openai' | 'anthropic' | 'google' | undefined;
  /**
   * True when the provider refuses (or cuts) an output cap above a model's documented limit,
   * so a call through the proxy, whose body goes upstream as sent, can write no more than the
   * catalog's maxOutputTokens: it is held for at most that. Absent: the provider writes what
   * it is asked, up to the context window (Mistral, Together, …): a proxied call is held for
   * what it asks, at most the context window, and for the window when it asks for no cap.
   */
  outputCapEnforced?: true;
  /**
   * Where a proxied path may carry an encoded slash (%2F) inside a segment (Bedrock: a model
   * id that is an inference profile's ARN); anywhere else such a path is refused.
   */
  encodedSlashIn?: RegExp;
  usageFormat: UsageFormat;
  /** The quota a call through this provider consumes. */
  usageType: UsageType;
  /** For chat providers: the path of their chat endpoint (used by smart routing / unified chat; `{model}` is the model id). */
  chatPath?: string;
  /** For chat providers: the format of that endpoint and what it takes (unified chat, the smart route). */
  chat?: ChatApi;
  pricing: ProviderPricing;
  /**
   * Cloud providers: where a proxied call goes, completed from the provider's settings
   * (Azure's deployment and api-version, Vertex's project and location), and the model it
   * is priced as. Absent: the caller's path and query unchanged, the model from the path or body.
   */
  proxyTarget?: (call: ProxyCall, settings: CloudSettings) => ProxyTarget;
  /**
   * Cloud providers as alias / smart-route targets: the chat API a model is called in (it
   * depends on the model: Vertex's Gemini and Claude); undefined: no chat format reaches it.
   */
  chatFor?: (model: string) => ChatApi | undefined;
  /**
   * Cloud providers as alias / smart-route targets: a chat-format body (as `chatFor` says) as
   * this provider takes it (see ChatUpstream); `headers`: the gateway's headers for it
   * beyond content type (anthropic-beta).
   */
  chatUpstream?: (format: ChatFormat, body: Record<string, unknown>, model: string, settings: CloudSettings, headers?: Readonly<Record<string, string>>) => ChatUpstream | undefined;
  /**
   * Cloud providers: the id a cloud model id is priced as (Bedrock: without its geographic
   * inference profile's prefix); its catalog row is the longest one it starts with.
   */
  pricedAs?: (model: string) => string;
}

/** The proxy's allowlist of a provider (ProviderDef.proxyPaths): RegExps tested against the whole path. */
export interface ProxyPaths {
  post?: readonly RegExp[];
  get: readonly RegExp[];
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

/**
 * Where it goes upstream, and the model it is priced as; `error`: refused with 400
 * INVALID_REQUEST, or with 403 PROXY_PATH_NOT_ALLOWED when `notAllowed` (a path outside the
 * configured project or location).
 */
export type ProxyTarget = { path: string; query: string; model: string | null; error?: undefined } | { error: string; notAllowed?: boolean };

/**
 * The upstream request of a call in one of the gateway's chat formats (the alias and
 * smart-route targets): path, query and body adapted to the provider; credentials are
 * added when it is sent. `undefined`: the provider does not take that format for that model.
 */
export interface ChatUpstream {
  path: string;
  query: string;
  headers: Record<string, string>;
  body: string;
  /** how the answer's usage is read, and whether a stream comes as AWS event stream frames */
  usageFormat: UsageFormat;
  eventStream: boolean;
  /** `converse`: the answer is Bedrock's Converse shape (JSON or event stream), turned into the messages format's */
  answer?: 'converse';
  /** what of the body the cloud does not take (left out and named, or refused in strict mode) */
  dropped?: string[];
}

/** One price of a model in the bundled price data (genai-prices.ts): in force from `from` (ISO date) on, or always. */
export interface DataPrice extends Omit<TokenPrices, 'cachedInputPer1M'> {
  from?: string;
  cachedInputPer1M?: number;
  tiers?: readonly PriceTier[];
}

/** A model in the bundled price data: its id there, its context window if the data knows it, its prices by date. */
export interface DataModel {
  id: string;
  contextTokens?: number;
  prices: readonly DataPrice[];
  /** price keys of the data agw does not charge (audio input, web searches, …) */
  unpriced?: readonly string[];
}
