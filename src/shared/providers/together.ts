import type { ProviderDef } from './types.js';

export const together = {
  id: 'together',
  name: 'Together AI',
  description: 'Hosted inference of open-weight models such as Llama through an OpenAI-compatible API.',
  category: 'LLM',
  baseUrl: 'https://api.together.xyz',
  auth: { style: 'bearer' },
  usageFormat: 'openai',
  usageType: 'ai_chat',
  chatPath: '/v1/chat/completions',
  chat: {
    format: 'common',
    unsupported: ['store', 'metadata', 'service_tier', 'modalities', 'audio', 'prediction'],
    renamed: { max_completion_tokens: 'max_tokens' },
    reference: 'https://docs.together.ai/reference/chat-completions-1',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://www.together.ai/pricing',
    // Serverless prices are the same for input and output; no cache discount.
    models: [
      { model: 'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo', band: 'lite', inputPer1M: 0.18, outputPer1M: 0.18, cachedInputPer1M: 0.18, maxOutputTokens: 32_768 },
      { model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo', band: 'standard', inputPer1M: 0.88, outputPer1M: 0.88, cachedInputPer1M: 0.88, maxOutputTokens: 32_768 },
      { model: 'meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo', band: 'pro', inputPer1M: 3.5, outputPer1M: 3.5, cachedInputPer1M: 3.5, maxOutputTokens: 32_768 },
    ],
  },
} satisfies ProviderDef;
