import { priced } from './prices.js';
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
    // its usage counts cache hits as prompt_cache_hit_tokens, not prompt_tokens_details.cached_tokens
    cachedTokensField: 'prompt_cache_hit_tokens',
    reference: 'https://api-docs.deepseek.com/api/create-chat-completion',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://api-docs.deepseek.com/quick_start/pricing',
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('deepseek', [
      // The data's DeepSeek prices are those before V3.2 (peak/off-peak, 64k context); the pricing page
      // above gives V3.2's, one price all day since 2025-09-29 (cachedInputPer1M: the cache-hit price)
      { model: 'deepseek-chat', band: 'lite', maxOutputTokens: 8_000, contextTokens: 131_072, price: { inputPer1M: 0.28, outputPer1M: 0.42, cachedInputPer1M: 0.028 } },
      { model: 'deepseek-reasoner', band: 'standard', maxOutputTokens: 64_000, contextTokens: 131_072, price: { inputPer1M: 0.28, outputPer1M: 0.42, cachedInputPer1M: 0.028 } },
    ]),
  },
  // chat and FIM completions (https://api-docs.deepseek.com/api/deepseek-api; /v1 and /beta are its aliases);
  // not GET /user/balance (the operator's account); GETs: the model list
  proxyPaths: { post: [/^(\/v1|\/beta)?\/(chat\/completions|completions)$/], get: [/^(\/v1)?\/models$/] },
} satisfies ProviderDef;
