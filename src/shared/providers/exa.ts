import type { ProviderDef } from './types.js';

/** Exa neural web search; the quota type is ai_chat because search feeds LLM answers. */
export const exa = {
  id: 'exa',
  name: 'Exa',
  description: 'Neural web search, page contents and answers for AI applications through the Exa API.',
  category: 'Search',
  baseUrl: 'https://api.exa.ai',
  auth: { style: 'header', header: 'x-api-key' },
  usageFormat: 'units',
  usageType: 'ai_chat',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://exa.ai/pricing',
    units: [
      { unit: 'request', price: 0.005, measure: 'request', pathPrefix: '/search', description: 'one search returning up to 25 results' },
      { unit: 'request', price: 0.005, measure: 'request', pathPrefix: '/findSimilar', description: 'one find-similar search returning up to 25 results' },
      { unit: 'request', price: 0.001, measure: 'request', pathPrefix: '/contents', description: 'contents of one page' },
      { unit: 'request', price: 0.005, measure: 'request', pathPrefix: '/answer', description: 'one answer' },
      { unit: 'request', price: 0.005, measure: 'request', description: 'any other call, charged as one search' },
    ],
  },
  // GETs through the proxy: none
  proxyPaths: { get: [] },
} satisfies ProviderDef;
