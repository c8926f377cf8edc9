import { priced } from './prices.js';
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
    lastUpdated: '2026-11-27',
    sourceUrl: 'https://docs.x.ai/docs/models',
    // context windows from the data (grok-4 is grok-4-0709 there)
    // prices: the bundled price data (genai-prices.ts), unless a row states its own
    models: priced('xai', [
      { model: 'grok-3-mini', band: 'lite', maxOutputTokens: 131_072 },
      { model: 'grok-4', band: 'pro', maxOutputTokens: 131_072 },
    ]),
  },
  // free: POST /v1/tokenize-text (https://docs.x.ai/docs/api-reference); batches: /v1/batches
  freePaths: ['/v1/tokenize-text'],
  batchPaths: [/^\/v1\/batches\/?$/],
  // chat completions, responses, the Anthropic-compatible messages (https://docs.x.ai/docs/api-reference); not images (per image)
  proxyPaths: { post: [/^\/v1\/(chat\/completions|responses|messages)$/], get: [/^\/v1\/(models|language-models)(\/[^/]+)?$/] },
} satisfies ProviderDef;
