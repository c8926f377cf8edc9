import type { ProviderDef } from './types.js';

export const xai = {
  id: 'xai',
  name: 'xAI',
  description: 'Grok models served through the xAI API, which is OpenAI-compatible.',
  category: 'LLM',
  baseUrl: 'https://api.x.ai',
  auth: { style: 'bearer' },
  usageFormat: 'openai',
  usageType: 'ai_chat',
  chatPath: '/v1/chat/completions',
  chat: {
    format: 'common',
    // reasoning_effort: grok-3-mini only (grok-4 reasons always and refuses the field)
    reasoningModels: /^grok-3-mini/,
    reference: 'https://docs.x.ai/docs/api-reference#chat-completions',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://docs.x.ai/docs/models',
    models: [
      { model: 'grok-3-mini', band: 'lite', inputPer1M: 0.3, outputPer1M: 0.5, cachedInputPer1M: 0.075, maxOutputTokens: 131_072 },
      { model: 'grok-4', band: 'pro', inputPer1M: 3.0, outputPer1M: 15.0, cachedInputPer1M: 0.75, maxOutputTokens: 131_072 },
    ],
  },
} satisfies ProviderDef;
