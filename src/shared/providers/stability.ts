import type { ProviderDef } from './types.js';

/** Stability AI bills credits at $0.01 each; every v2beta generation call returns one image. */
export const stability = {
  id: 'stability',
  name: 'Stability AI',
  description: 'Stable Image and Stable Diffusion 3.5 image generation and editing through the Stability AI platform API.',
  category: 'Image',
  baseUrl: 'https://api.stability.ai',
  auth: { style: 'bearer' },
  usageFormat: 'units',
  usageType: 'image_generation',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://platform.stability.ai/pricing',
    units: [
      { unit: 'image', price: 0.08, measure: 'request', pathPrefix: '/v2beta/stable-image/generate/ultra', description: 'one Stable Image Ultra image (8 credits)' },
      { unit: 'image', price: 0.03, measure: 'request', pathPrefix: '/v2beta/stable-image/generate/core', description: 'one Stable Image Core image (3 credits)' },
      { unit: 'image', price: 0.065, measure: 'request', pathPrefix: '/v2beta/stable-image/generate/sd3', description: 'one Stable Diffusion 3.5 Large image (6.5 credits)' },
      { unit: 'image', price: 0.02, measure: 'request', pathPrefix: '/v2beta/stable-image/upscale/fast', description: 'one fast 4x upscale (2 credits)' },
      { unit: 'image', price: 0.08, measure: 'request', description: 'any other image call, charged at the Ultra rate' },
    ],
  },
  // GETs through the proxy: an async result by its id and the engine list (https://platform.stability.ai/docs/api-reference); not the balance
  proxyPaths: { get: [/^\/v2beta\/results\/[^/]+$/, /^\/v1\/engines\/list$/] },
} satisfies ProviderDef;
