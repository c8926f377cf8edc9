import type { ProviderDef } from './types.js';

/** Meshy API credits cost about $0.02 each (Pro plan); prices use the Meshy-6 credit costs. */
export const meshy = {
  id: 'meshy',
  name: 'Meshy',
  description: 'Text-to-3D and image-to-3D model generation, texturing and rigging through the Meshy API.',
  category: '3D',
  baseUrl: 'https://api.meshy.ai',
  auth: { style: 'bearer' },
  usageFormat: 'units',
  usageType: 'model_3d',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://www.meshy.ai/pricing',
    units: [
      { unit: 'model', price: 0.4, measure: 'request', pathPrefix: '/openapi/v2/text-to-3d', description: 'one Text to 3D task (preview 20 credits; refine 10 credits)' },
      { unit: 'model', price: 0.6, measure: 'request', pathPrefix: '/openapi/v1/image-to-3d', description: 'one textured Image to 3D model (30 credits)' },
      { unit: 'model', price: 0.6, measure: 'request', pathPrefix: '/openapi/v1/multi-image-to-3d', description: 'one textured Multi-Image to 3D model (30 credits)' },
      { unit: 'model', price: 0.2, measure: 'request', pathPrefix: '/openapi/v1/retexture', description: 'one retexture task (10 credits)' },
      { unit: 'model', price: 0.1, measure: 'request', pathPrefix: '/openapi/v1/rigging', description: 'one rigging task (5 credits)' },
      { unit: 'request', price: 0.2, measure: 'request', description: 'any other task, charged as 10 credits' },
    ],
  },
  // GETs through the proxy: one task by its id, or its stream (https://docs.meshy.ai/en/api); not the account's task lists
  proxyPaths: { get: [/^\/openapi\/v[12]\/[a-z-]+\/[^/]+(\/stream)?$/] },
} satisfies ProviderDef;
