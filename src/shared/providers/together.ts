import { priced } from './prices.js';
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
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://www.together.ai/pricing',
    // Serverless prices are the same for input and output; no cache discount. Limits: https://docs.together.ai/docs/serverless-models
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('together', [
      { model: 'meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo', band: 'lite', maxOutputTokens: 32_768, contextTokens: 131_072 },
      { model: 'meta-llama/Llama-3.3-70B-Instruct-Turbo', band: 'standard', maxOutputTokens: 32_768, contextTokens: 131_072 },
      { model: 'meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo', band: 'pro', maxOutputTokens: 32_768, contextTokens: 131_072 },
    ]),
  },
  // batches: https://docs.together.ai/docs/batch-inference
  batchPaths: [/^\/v1\/batches\/?$/],
  // chat, completions, embeddings (https://docs.together.ai/reference); not images, audio, files or fine-tuning
  proxyPaths: { post: [/^\/v1\/(chat\/completions|completions|embeddings)$/], get: [/^\/v1\/models$/] },
} satisfies ProviderDef;
