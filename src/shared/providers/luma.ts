import type { ProviderDef } from './types.js';

/**
 * Luma Dream Machine API. Its `duration` is a string such as "5s", so video is priced per
 * generation (5-second 720p Ray 2 clip) rather than per second. Image path first: it shares the prefix.
 */
export const luma = {
  id: 'luma',
  name: 'Luma AI',
  description: 'Ray video and Photon image generation through the Luma Dream Machine API.',
  category: 'Video',
  baseUrl: 'https://api.lumalabs.ai',
  auth: { style: 'bearer' },
  usageFormat: 'units',
  usageType: 'image_generation',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://lumalabs.ai/api/pricing',
    units: [
      { unit: 'image', price: 0.016, measure: 'request', pathPrefix: '/dream-machine/v1/generations/image', description: 'one Photon 1080p image' },
      { unit: 'generation', price: 0.71, measure: 'request', pathPrefix: '/dream-machine/v1/generations', description: 'one 5-second 720p Ray 2 video' },
      { unit: 'generation', price: 0.71, measure: 'request', description: 'any other generation call, charged as one Ray 2 video' },
    ],
  },
  // GETs through the proxy: one generation by its id (https://docs.lumalabs.ai/reference); not the account's list
  proxyPaths: { get: [/^\/dream-machine\/v1\/generations\/[^/]+$/, /^\/dream-machine\/v1\/generations\/camera_motion\/list$/] },
} satisfies ProviderDef;
