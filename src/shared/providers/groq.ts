import { priced } from './prices.js';
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
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://groq.com/pricing',
    // No prompt-cache discount on these models: cached input = input. Limits: https://console.groq.com/docs/models
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('groq', [
      { model: 'llama-3.1-8b-instant', band: 'lite', maxOutputTokens: 131_072, contextTokens: 131_072 },
      { model: 'llama-3.3-70b-versatile', band: 'standard', maxOutputTokens: 32_768, contextTokens: 131_072 },
    ]),
  },
  // batches: https://console.groq.com/docs/batch
  batchPaths: [/^\/v1\/batches\/?$/],
  // chat completions and responses (https://console.groq.com/docs/api-reference); not audio (billed per hour of audio)
  proxyPaths: { post: [/^\/v1\/(chat\/completions|responses)$/], get: [/^\/v1\/models(\/[^/]+)?$/] },
} satisfies ProviderDef;
