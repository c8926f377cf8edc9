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
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://www.anthropic.com/pricing#api',
    models: [
      { model: 'claude-3-5-haiku-latest', band: 'lite', inputPer1M: 0.8, outputPer1M: 4.0, cachedInputPer1M: 0.08, maxOutputTokens: 8_192 },
      { model: 'claude-haiku-4-5', band: 'standard', inputPer1M: 1.0, outputPer1M: 5.0, cachedInputPer1M: 0.1, maxOutputTokens: 64_000 },
      { model: 'claude-sonnet-4-5', band: 'pro', inputPer1M: 3.0, outputPer1M: 15.0, cachedInputPer1M: 0.3, maxOutputTokens: 64_000 },
      { model: 'claude-opus-4-1', band: 'premium', inputPer1M: 15.0, outputPer1M: 75.0, cachedInputPer1M: 1.5, maxOutputTokens: 32_000 },
    ],
  },
} satisfies ProviderDef;
