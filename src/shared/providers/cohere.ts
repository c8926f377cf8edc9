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
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://cohere.com/pricing',
    // No prompt-cache discount: cached input = input.
    models: [
      { model: 'command-r7b-12-2024', band: 'lite', inputPer1M: 0.0375, outputPer1M: 0.15, cachedInputPer1M: 0.0375, maxOutputTokens: 4_000 },
      { model: 'command-r', band: 'standard', inputPer1M: 0.15, outputPer1M: 0.6, cachedInputPer1M: 0.15, maxOutputTokens: 4_000 },
      { model: 'command-r-plus', band: 'pro', inputPer1M: 2.5, outputPer1M: 10.0, cachedInputPer1M: 2.5, maxOutputTokens: 4_000 },
      { model: 'command-a-03-2025', band: 'pro', inputPer1M: 2.5, outputPer1M: 10.0, cachedInputPer1M: 2.5, maxOutputTokens: 8_000 },
    ],
  },
} satisfies ProviderDef;
