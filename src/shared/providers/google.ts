import { priced } from './prices.js';
import type { ProviderDef } from './types.js';

/** Gemini API; chat calls go to /v1beta/models/{model}:generateContent (:streamGenerateContent?alt=sse streamed). */
export const google = {
  id: 'google',
  name: 'Google Gemini',
  description: 'Gemini models served through the Google Gemini API (Generative Language API).',
  category: 'LLM',
  baseUrl: 'https://generativelanguage.googleapis.com',
  auth: { style: 'header', header: 'x-goog-api-key' },
  usageFormat: 'gemini',
  usageType: 'ai_chat',
  chatPath: '/v1beta/models/{model}',
  chat: {
    format: 'gemini',
    // thinkingConfig: the 2.5 and 3 models (ai.google.dev/gemini-api/docs/thinking)
    reasoningModels: /^gemini-(2\.5|3)/,
    reference: 'https://ai.google.dev/api/generate-content',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://ai.google.dev/gemini-api/docs/pricing',
    // Paid tier, text input; cachedInputPer1M is the context-caching price (its storage per hour is
    // not per call); 2.5 Pro above 200k prompt tokens $2.50/$15, cache $0.25:
    // https://ai.google.dev/gemini-api/docs/pricing. Limits: https://ai.google.dev/gemini-api/docs/models
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('google', [
      { model: 'gemini-2.5-flash-lite', band: 'lite', maxOutputTokens: 65_536, contextTokens: 1_048_576 },
      { model: 'gemini-2.5-flash', band: 'standard', maxOutputTokens: 65_536, contextTokens: 1_048_576 },
      { model: 'gemini-2.5-pro', band: 'pro', maxOutputTokens: 65_536, contextTokens: 1_048_576 },
    ]),
  },
  // free: models.countTokens (https://ai.google.dev/api/tokens); batch mode:
  // https://ai.google.dev/gemini-api/docs/batch-mode (50% of the price)
  freePaths: [/^\/v1(beta)?\/models\/[^/]+:countTokens$/],
  batchPaths: [/:(batchGenerateContent|asyncBatchEmbedContent)$/],
  // generating and embedding by a model (https://ai.google.dev/api); not cachedContents (storage billed by the
  // hour), files, tuning or the OpenAI-compatible paths (answers in another usage shape); GETs: models and model info
  // no more than the model's output token limit is written (https://ai.google.dev/gemini-api/docs/models:
  // "Output token limit"; a larger maxOutputTokens is refused or cut to it)
  outputCapEnforced: true,
  proxyPaths: {
    post: [/^\/v1(beta)?\/models\/[^/:]+:(generateContent|streamGenerateContent|embedContent|batchEmbedContents)$/],
    get: [/^\/v1(beta)?\/models(\/[^/:]+)?$/],
  },
} satisfies ProviderDef;
