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
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://mistral.ai/pricing#api-pricing',
    // No prompt-cache discount: cached input = input.
    models: [
      { model: 'mistral-small-latest', band: 'lite', inputPer1M: 0.1, outputPer1M: 0.3, cachedInputPer1M: 0.1, maxOutputTokens: 32_768 },
      { model: 'mistral-medium-latest', band: 'standard', inputPer1M: 0.4, outputPer1M: 2.0, cachedInputPer1M: 0.4, maxOutputTokens: 32_768 },
      { model: 'mistral-large-latest', band: 'pro', inputPer1M: 2.0, outputPer1M: 6.0, cachedInputPer1M: 2.0, maxOutputTokens: 32_768 },
    ],
  },
} satisfies ProviderDef;
