import { priced } from './prices.js';
import type { ProviderDef } from './types.js';

export const mistral = {
  id: 'mistral',
  name: 'Mistral AI',
  description: 'Mistral chat models served through the Mistral La Plateforme API.',
  category: 'LLM',
  baseUrl: 'https://api.mistral.ai',
  auth: { style: 'bearer' },
  usageFormat: 'openai',
  usageType: 'ai_chat',
  chatPath: '/v1/chat/completions',
  chat: {
    format: 'common',
    // no reasoning_effort; the seed is random_seed, the output cap max_tokens
    unsupported: ['user', 'logit_bias', 'logprobs', 'top_logprobs', 'store', 'metadata', 'service_tier', 'modalities', 'audio', 'prediction'],
    renamed: { max_completion_tokens: 'max_tokens', seed: 'random_seed' },
    reference: 'https://docs.mistral.ai/api/#tag/chat/operation/chat_completion_v1_chat_completions_post',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://mistral.ai/pricing#api-pricing',
    // Limits: https://docs.mistral.ai/getting-started/models/models_overview
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('mistral', [
      { model: 'mistral-small-latest', band: 'lite', maxOutputTokens: 32_768, contextTokens: 131_072 },
      { model: 'mistral-medium-latest', band: 'standard', maxOutputTokens: 32_768, contextTokens: 131_072 },
      { model: 'mistral-large-latest', band: 'pro', maxOutputTokens: 32_768, contextTokens: 131_072 },
    ]),
  },
  // batches: https://docs.mistral.ai/capabilities/batch/
  batchPaths: [/^\/v1\/batch\/jobs\/?$/],
  // chat, FIM and embeddings (https://docs.mistral.ai/api/); not OCR (per page), files, fine-tuning, agents or libraries
  proxyPaths: { post: [/^\/v1\/(chat\/completions|fim\/completions|embeddings)$/], get: [/^\/v1\/models(\/[^/]+)?$/] },
} satisfies ProviderDef;
