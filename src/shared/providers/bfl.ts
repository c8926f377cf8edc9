import type { ProviderDef } from './types.js';

/**
 * Black Forest Labs FLUX API. Each endpoint is one model; prefixes are ordered longest first
 * because '/v1/flux-pro-1.1' is a prefix of '/v1/flux-pro-1.1-ultra'. Results are polled with GET.
 */
export const bfl = {
  id: 'bfl',
  name: 'Black Forest Labs',
  description: 'FLUX text-to-image and image editing models through the Black Forest Labs API.',
  category: 'Image',
  baseUrl: 'https://api.bfl.ai',
  auth: { style: 'header', header: 'x-key' },
  usageFormat: 'units',
  usageType: 'image_generation',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://bfl.ai/pricing',
    units: [
      { unit: 'image', price: 0.06, measure: 'request', pathPrefix: '/v1/flux-pro-1.1-ultra', description: 'one FLUX1.1 [pro] Ultra image' },
      { unit: 'image', price: 0.04, measure: 'request', pathPrefix: '/v1/flux-pro-1.1', description: 'one FLUX1.1 [pro] image' },
      { unit: 'image', price: 0.08, measure: 'request', pathPrefix: '/v1/flux-kontext-max', description: 'one FLUX.1 Kontext [max] image' },
      { unit: 'image', price: 0.04, measure: 'request', pathPrefix: '/v1/flux-kontext-pro', description: 'one FLUX.1 Kontext [pro] image' },
      { unit: 'image', price: 0.025, measure: 'request', pathPrefix: '/v1/flux-dev', description: 'one FLUX.1 [dev] image' },
      { unit: 'image', price: 0.05, measure: 'request', pathPrefix: '/v1/flux-pro', description: 'one FLUX.1 [pro] image' },
      { unit: 'image', price: 0.08, measure: 'request', description: 'any other FLUX endpoint, charged at the highest image rate' },
    ],
  },
  // GETs through the proxy: a job's result by its id (https://docs.bfl.ai/api_integration/integration_guidelines)
  proxyPaths: { get: [/^\/v1\/get_result$/] },
} satisfies ProviderDef;
