import type { ProviderDef } from './types.js';

export const deepseek = {
  id: 'deepseek',
  name: 'DeepSeek',
  description: 'DeepSeek chat and reasoning models served through an OpenAI-compatible API.',
  category: 'LLM',
  baseUrl: 'https://api.deepseek.com',
  auth: { style: 'bearer' },
  usageFormat: 'openai',
  usageType: 'ai_chat',
  chatPath: '/chat/completions',
  chat: {
    format: 'common',
    // the parameters its reference lists are all it takes; response_format is text or json_object
    unsupported: ['n', 'seed', 'logit_bias', 'parallel_tool_calls', 'user', 'store', 'metadata', 'service_tier', 'modalities', 'audio', 'prediction'],
    renamed: { max_completion_tokens: 'max_tokens' },
    jsonSchemaModels: /^$/,
    reference: 'https://api-docs.deepseek.com/api/create-chat-completion',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://api-docs.deepseek.com/quick_start/pricing',
    // DeepSeek-V3.2-Exp prices; cachedInputPer1M is the cache-hit input price.
    models: [
      { model: 'deepseek-chat', band: 'lite', inputPer1M: 0.28, outputPer1M: 0.42, cachedInputPer1M: 0.028, maxOutputTokens: 8_000 },
      { model: 'deepseek-reasoner', band: 'standard', inputPer1M: 0.28, outputPer1M: 0.42, cachedInputPer1M: 0.028, maxOutputTokens: 64_000 },
    ],
  },
} satisfies ProviderDef;
