import type { ProviderDef } from './types.js';

/**
 * fal.ai synchronous model endpoints (path = model id). FLUX is billed per ~1 megapixel image;
 * `num_images` (default 1) counts the images. Prefixes are ordered longest first.
 */
export const fal = {
  id: 'fal',
  name: 'fal.ai',
  description: 'Serverless inference of hosted generative media models through the fal.ai API.',
  category: 'Other',
  baseUrl: 'https://fal.run',
  auth: { style: 'header', header: 'Authorization', prefix: 'Key ' },
  usageFormat: 'units',
  usageType: 'image_generation',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://fal.ai/pricing',
    units: [
      { unit: 'image', price: 0.06, measure: 'field', countField: 'num_images', pathPrefix: '/fal-ai/flux-pro/v1.1-ultra', description: 'one FLUX1.1 [pro] ultra image' },
      { unit: 'image', price: 0.04, measure: 'field', countField: 'num_images', pathPrefix: '/fal-ai/flux-pro/v1.1', description: 'one 1-megapixel FLUX1.1 [pro] image' },
      { unit: 'image', price: 0.025, measure: 'field', countField: 'num_images', pathPrefix: '/fal-ai/flux/dev', description: 'one 1-megapixel FLUX.1 [dev] image' },
      { unit: 'image', price: 0.003, measure: 'field', countField: 'num_images', pathPrefix: '/fal-ai/flux/schnell', description: 'one 1-megapixel FLUX.1 [schnell] image' },
      { unit: 'request', price: 0.05, measure: 'request', description: 'any other model, flat estimate per request' },
    ],
  },
  // GETs through the proxy: none (fal.run answers synchronously)
  proxyPaths: { get: [] },
} satisfies ProviderDef;
