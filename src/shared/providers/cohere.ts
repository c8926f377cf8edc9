import { priced } from './prices.js';
import type { ProviderDef } from './types.js';

/** Cohere's own chat (/v2/chat) has its own body schema; unified chat calls its Compatibility API, which takes the common format. */
export const cohere = {
  id: 'cohere',
  name: 'Cohere',
  description: 'Command models for chat and retrieval-augmented generation served through the Cohere API.',
  category: 'LLM',
  baseUrl: 'https://api.cohere.com',
  auth: { style: 'bearer' },
  usageFormat: 'cohere',
  usageType: 'ai_chat',
  chatPath: '/compatibility/v1/chat/completions',
  chat: {
    format: 'common',
    // the Compatibility API's "Unsupported parameters" (docs.cohere.com/docs/compatibility-api)
    unsupported: ['store', 'modalities', 'audio', 'n', 'logit_bias', 'top_logprobs', 'metadata', 'prediction', 'service_tier', 'parallel_tool_calls'],
    reference: 'https://docs.cohere.com/docs/compatibility-api',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://cohere.com/pricing',
    // No prompt-cache discount: cached input = input. Limits: https://docs.cohere.com/docs/models
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('cohere', [
      { model: 'command-r7b-12-2024', band: 'lite', maxOutputTokens: 4_000, contextTokens: 128_000 },
      { model: 'command-r', band: 'standard', maxOutputTokens: 4_000, contextTokens: 128_000 },
      { model: 'command-r-plus', band: 'pro', maxOutputTokens: 4_000, contextTokens: 128_000 },
      { model: 'command-a-03-2025', band: 'pro', maxOutputTokens: 8_000, contextTokens: 256_000 },
    ]),
  },
  // free: tokenize / detokenize (https://docs.cohere.com/reference/tokenize); batch jobs:
  // https://docs.cohere.com/reference/create-embed-job, https://docs.cohere.com/reference/create-batch
  freePaths: ['/v1/tokenize', '/v1/detokenize'],
  batchPaths: [/^\/v1\/embed-jobs\/?$/, /^\/v2\/batches\/?$/],
  // chat and embed, v1, v2 and the Compatibility API (https://docs.cohere.com/reference); not rerank (per search) or datasets
  proxyPaths: {
    post: [/^\/v[12]\/(chat|embed)$/, /^\/compatibility\/v1\/(chat\/completions|embeddings)$/],
    get: [/^\/v1\/models(\/[^/]+)?$/],
  },
} satisfies ProviderDef;
