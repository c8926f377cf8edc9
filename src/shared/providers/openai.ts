import { priced } from './prices.js';
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
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://platform.openai.com/docs/pricing',
    // limits: https://platform.openai.com/docs/models (each model's page: context window, max output tokens)
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('openai', [
      { model: 'gpt-4.1-nano', band: 'lite', maxOutputTokens: 32_768, contextTokens: 1_047_576 },
      { model: 'gpt-4o-mini', band: 'lite', maxOutputTokens: 16_384, contextTokens: 128_000 },
      { model: 'gpt-4.1-mini', band: 'standard', maxOutputTokens: 32_768, contextTokens: 1_047_576 },
      { model: 'gpt-4.1', band: 'pro', maxOutputTokens: 32_768, contextTokens: 1_047_576 },
      { model: 'gpt-4o', band: 'pro', maxOutputTokens: 16_384, contextTokens: 128_000 },
      { model: 'o3', band: 'premium', maxOutputTokens: 100_000, contextTokens: 200_000 },
    ]),
  },
  // free: counting a Responses input's tokens (https://platform.openai.com/docs/api-reference/responses/input-tokens);
  // batches are billed at the batch price from the output file (https://platform.openai.com/docs/guides/batch)
  freePaths: ['/v1/responses/input_tokens'],
  batchPaths: [/^\/v1\/batches\/?$/],
  // the proxy forwards inference only (fine-tuning, files, vector stores, audio and images would be
  // booked at about $0, and GETs of files or stored responses are every tenant's): model lists and info
  // a cap above the model's limit is refused: "max_tokens is too large: 20480. This model supports at
  // most 16384 completion tokens" (400 invalid_request_error; https://platform.openai.com/docs/models)
  outputCapEnforced: true,
  proxyPaths: { post: [/^\/v1\/(chat\/completions|responses|completions|embeddings)$/], get: [/^\/v1\/models(\/[^/]+)?$/] },
} satisfies ProviderDef;
