import type { ProviderDef } from './types.js';

/** ElevenLabs: text to speech is billed per character of `text`; sound effects use their own quota. */
export const elevenlabs = {
  id: 'elevenlabs',
  name: 'ElevenLabs',
  description: 'Text-to-speech, voice and sound-effect generation through the ElevenLabs API.',
  category: 'Audio',
  baseUrl: 'https://api.elevenlabs.io',
  auth: { style: 'header', header: 'xi-api-key' },
  usageFormat: 'units',
  usageType: 'tts',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://elevenlabs.io/pricing/api',
    units: [
      { unit: 'character', price: 0.0001, measure: 'chars', countField: 'text', pathPrefix: '/v1/text-to-speech', description: 'one character of Multilingual v2 speech ($0.10 per 1k characters)' },
      { unit: 'generation', price: 0.04, measure: 'request', pathPrefix: '/v1/sound-generation', usageType: 'sound_effect', description: 'one sound effect at automatic duration' },
      { unit: 'request', price: 0.01, measure: 'request', description: 'any other API call, flat estimate' },
    ],
  },
  // GETs through the proxy: models and voices (https://elevenlabs.io/docs/api-reference); not the history, the user or the subscription
  proxyPaths: { get: [/^\/v1\/models$/, /^\/v[12]\/voices(\/[^/]+)?$/] },
} satisfies ProviderDef;
