import type { ProviderDef } from './types.js';

/** Gemini API; chat calls go to /v1beta/models/{model}:generateContent (:streamGenerateContent?alt=sse streamed). */
export const google = {
  id: 'google',
  name: 'Google Gemini',
  description: 'Gemini models served through the Google Gemini API (Generative Language API).',
  category: 'LLM',
  baseUrl: 'https://generativelanguage.googleapis.com',
  auth: { style: 'header', header: 'x-goog-api-key' },
  usageFormat: 'gemini',
  usageType: 'ai_chat',
  chatPath: '/v1beta/models/{model}',
  chat: {
    format: 'gemini',
    // thinkingConfig: the 2.5 and 3 models (ai.google.dev/gemini-api/docs/thinking)
    reasoningModels: /^gemini-(2\.5|3)/,
    reference: 'https://ai.google.dev/api/generate-content',
  },
  pricing: {
    kind: 'llm',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://ai.google.dev/gemini-api/docs/pricing',
    // Paid tier, text input, prompts up to 200k tokens; cachedInputPer1M is the context-caching price.
    models: [
      { model: 'gemini-2.5-flash-lite', band: 'lite', inputPer1M: 0.1, outputPer1M: 0.4, cachedInputPer1M: 0.01, maxOutputTokens: 65_536 },
      { model: 'gemini-2.5-flash', band: 'standard', inputPer1M: 0.3, outputPer1M: 2.5, cachedInputPer1M: 0.03, maxOutputTokens: 65_536 },
      { model: 'gemini-2.5-pro', band: 'pro', inputPer1M: 1.25, outputPer1M: 10.0, cachedInputPer1M: 0.125, maxOutputTokens: 65_536 },
    ],
  },
} satisfies ProviderDef;
