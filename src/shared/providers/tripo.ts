import type { ProviderDef } from './types.js';

/** Tripo: every task (text_to_model, image_to_model, ...) goes to one endpoint; credits are $0.01 each. */
export const tripo = {
  id: 'tripo',
  name: 'Tripo',
  description: 'Text-to-3D and image-to-3D model generation through the Tripo 3D API.',
  category: '3D',
  baseUrl: 'https://api.tripo3d.ai',
  auth: { style: 'bearer' },
  usageFormat: 'units',
  usageType: 'model_3d',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://platform.tripo3d.ai/docs/billing',
    units: [
      { unit: 'upload', price: 0, measure: 'request', pathPrefix: '/v2/openapi/upload', description: 'one input image upload (free)' },
      { unit: 'model', price: 0.3, measure: 'request', pathPrefix: '/v2/openapi/task', description: 'one textured model task (about 30 credits)' },
      { unit: 'model', price: 0.3, measure: 'request', description: 'any other call, charged as one model task' },
    ],
  },
  // GETs through the proxy: one task by its id (https://platform.tripo3d.ai/docs); not the balance
  proxyPaths: { get: [/^\/v2\/openapi\/task\/[^/]+$/] },
} satisfies ProviderDef;
