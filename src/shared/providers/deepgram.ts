import type { ProviderDef } from './types.js';

/**
 * Deepgram: Aura text to speech is billed per character of `text`. Transcription is billed per audio
 * minute, which is unknown before the call, so one pre-recorded request is charged as one minute.
 */
export const deepgram = {
  id: 'deepgram',
  name: 'Deepgram',
  description: 'Speech-to-text transcription and Aura text-to-speech through the Deepgram API.',
  category: 'Audio',
  baseUrl: 'https://api.deepgram.com',
  auth: { style: 'header', header: 'Authorization', prefix: 'Token ' },
  usageFormat: 'units',
  usageType: 'tts',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://deepgram.com/pricing',
    units: [
      { unit: 'character', price: 0.00003, measure: 'chars', countField: 'text', pathPrefix: '/v1/speak', description: 'one character of Aura-2 speech ($0.030 per 1k characters)' },
      { unit: 'minute', price: 0.0043, measure: 'request', pathPrefix: '/v1/listen', description: 'one pre-recorded Nova-3 transcription, charged as one audio minute' },
      { unit: 'request', price: 0.0043, measure: 'request', description: 'any other API call, charged as one audio minute' },
    ],
  },
  // GETs through the proxy: the model list (https://developers.deepgram.com/reference); not projects, keys, usage or balances
  proxyPaths: { get: [/^\/v1\/models(\/[^/]+)?$/] },
} satisfies ProviderDef;
