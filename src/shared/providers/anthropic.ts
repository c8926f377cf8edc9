import { priced } from './prices.js';
import type { ProviderDef } from './types.js';

export const anthropic = {
  id: 'anthropic',
  name: 'Anthropic',
  description: 'Claude models served through the Anthropic Messages API.',
  category: 'LLM',
  baseUrl: 'https://api.anthropic.com',
  auth: { style: 'header', header: 'x-api-key' },
  extraHeaders: { 'anthropic-version': '2023-06-01' },
  usageFormat: 'anthropic',
  usageType: 'ai_chat',
  chatPath: '/v1/messages',
  chat: {
    format: 'messages',
    // extended thinking: Claude 3.7 Sonnet and the Claude 4 models (docs.claude.com/en/docs/build-with-claude/extended-thinking)
    reasoningModels: /^claude-(3-7-sonnet|(sonnet|opus|haiku)-4)/,
    // output_config.format (structured outputs): the 4.5 models and Opus 4.1 on (docs.claude.com/en/docs/build-with-claude/structured-outputs)
    jsonSchemaModels: /^claude-((sonnet|haiku|opus)-4-[5-9]|opus-4-1)/,
    reference: 'https://docs.claude.com/en/api/messages',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://www.anthropic.com/pricing#api',
    // 5-minute cache writes 1.25x input, 1-hour writes 2x, reads 0.1x; Sonnet 4.5 above 200k prompt tokens
    // (1M context) $6/$22.50: https://docs.claude.com/en/docs/about-claude/pricing. Limits:
    // https://docs.claude.com/en/docs/about-claude/models/overview (context windows from the data)
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('anthropic', [
      { model: 'claude-3-5-haiku-latest', band: 'lite', maxOutputTokens: 8_192 },
      { model: 'claude-haiku-4-5', band: 'standard', maxOutputTokens: 64_000 },
      { model: 'claude-sonnet-4-5', band: 'pro', maxOutputTokens: 64_000 },
      { model: 'claude-opus-4-1', band: 'premium', maxOutputTokens: 32_000 },
    ]),
  },
  // free: https://docs.claude.com/en/docs/build-with-claude/token-counting ("free to use");
  // batches: https://docs.claude.com/en/docs/build-with-claude/batch-processing (50% of the price)
  freePaths: ['/v1/messages/count_tokens'],
  batchPaths: [/^\/v1\/messages\/batches\/?$/],
  // the proxy forwards the Messages API only; GETs: model lists and info (https://docs.claude.com/en/api/models-list)
  // a cap above the model's limit is refused: "max_tokens: 100000 > 64000, which is the maximum allowed
  // number of output tokens for …" (400; https://docs.claude.com/en/docs/about-claude/models/overview)
  outputCapEnforced: true,
  proxyPaths: { post: [/^\/v1\/messages$/], get: [/^\/v1\/models(\/[^/]+)?$/] },
} satisfies ProviderDef;
