import type { ProviderDef } from './types.js';

export const openai = {
  id: 'openai',
  name: 'OpenAI',
  description: 'GPT chat and reasoning models served through the OpenAI Chat Completions API.',
  category: 'LLM',
  baseUrl: 'https://api.openai.com',
  auth: { style: 'bearer' },
  usageFormat: 'openai',
  usageType: 'ai_chat',
  chatPath: '/v1/chat/completions',
  chat: {
    format: 'common',
    // reasoning_effort: o-series and GPT-5 models only
    reasoningModels: /^(o\d|gpt-5)/,
    reference: 'https://platform.openai.com/docs/api-reference/chat/create',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://platform.openai.com/docs/pricing',
    models: [
      { model: 'gpt-4.1-nano', band: 'lite', inputPer1M: 0.1, outputPer1M: 0.4, cachedInputPer1M: 0.025, maxOutputTokens: 32_768 },
      { model: 'gpt-4o-mini', band: 'lite', inputPer1M: 0.15, outputPer1M: 0.6, cachedInputPer1M: 0.075, maxOutputTokens: 16_384 },
      { model: 'gpt-4.1-mini', band: 'standard', inputPer1M: 0.4, outputPer1M: 1.6, cachedInputPer1M: 0.1, maxOutputTokens: 32_768 },
      { model: 'gpt-4.1', band: 'pro', inputPer1M: 2.0, outputPer1M: 8.0, cachedInputPer1M: 0.5, maxOutputTokens: 32_768 },
      { model: 'gpt-4o', band: 'pro', inputPer1M: 2.5, outputPer1M: 10.0, cachedInputPer1M: 1.25, maxOutputTokens: 16_384 },
      { model: 'o3', band: 'premium', inputPer1M: 2.0, outputPer1M: 8.0, cachedInputPer1M: 0.5, maxOutputTokens: 100_000 },
    ],
  },
} satisfies ProviderDef;
