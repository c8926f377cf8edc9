import type { ProviderDef } from './types.js';

/** Blockade Labs Skybox AI; exports of an existing skybox share the /api/v1/skybox prefix, so they come first. */
export const blockadelabs = {
  id: 'blockadelabs',
  name: 'Blockade Labs',
  description: '360-degree equirectangular skybox generation through the Blockade Labs Skybox AI API.',
  category: 'Other',
  baseUrl: 'https://backend.blockadelabs.com',
  auth: { style: 'header', header: 'x-api-key' },
  usageFormat: 'units',
  usageType: 'skybox',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://www.blockadelabs.com/pricing',
    units: [
      { unit: 'export', price: 0, measure: 'request', pathPrefix: '/api/v1/skybox/export', description: 'one export of an existing skybox (no generation)' },
      { unit: 'skybox', price: 0.1, measure: 'request', pathPrefix: '/api/v1/skybox', description: 'one Model 3 skybox generation' },
      { unit: 'request', price: 0.1, measure: 'request', description: 'any other generation call, charged as one skybox' },
    ],
  },
  // GETs through the proxy: one generation by its id and the style list (https://api-documentation.blockadelabs.com/api/); not the account's history
  proxyPaths: { get: [/^\/api\/v1\/imagine\/requests\/[^/]+$/, /^\/api\/v1\/skybox\/styles$/, /^\/api\/v1\/skybox\/export\/[^/]+$/] },
} satisfies ProviderDef;
