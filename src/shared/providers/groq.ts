import type { ProviderDef } from './types.js';

export const groq = {
  id: 'groq',
  name: 'Groq',
  description: 'Low-latency inference of open-weight models on Groq LPU hardware through an OpenAI-compatible API.',
  category: 'LLM',
  baseUrl: 'https://api.groq.com/openai',
  auth: { style: 'bearer' },
  usageFormat: 'openai',
  usageType: 'ai_chat',
  chatPath: '/v1/chat/completions',
  chat: {
    format: 'common',
    // "Unsupported features" of its OpenAI compatibility (console.groq.com/docs/openai)
    unsupported: ['logprobs', 'logit_bias', 'top_logprobs'],
    reasoningModels: /^(openai\/gpt-oss|qwen\/qwen3)/,
    reference: 'https://console.groq.com/docs/api-reference#chat-create',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://groq.com/pricing',
    // No prompt-cache discount on these models: cached input = input.
    models: [
      { model: 'llama-3.1-8b-instant', band: 'lite', inputPer1M: 0.05, outputPer1M: 0.08, cachedInputPer1M: 0.05, maxOutputTokens: 131_072 },
      { model: 'llama-3.3-70b-versatile', band: 'standard', inputPer1M: 0.59, outputPer1M: 0.79, cachedInputPer1M: 0.59, maxOutputTokens: 32_768 },
    ],
  },
} satisfies ProviderDef;
