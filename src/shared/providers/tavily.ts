import type { ProviderDef } from './types.js';

/**
 * Tavily: pay-as-you-go credits are $0.008 each. A basic search or extract costs 1 credit
 * (advanced search 2); the quota type is ai_chat because search feeds LLM answers.
 */
export const tavily = {
  id: 'tavily',
  name: 'Tavily',
  description: 'Web search, extraction and crawling built for LLM agents through the Tavily API.',
  category: 'Search',
  baseUrl: 'https://api.tavily.com',
  auth: { style: 'bearer' },
  usageFormat: 'units',
  usageType: 'ai_chat',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://docs.tavily.com/documentation/api-credits',
    units: [
      { unit: 'request', price: 0.008, measure: 'request', pathPrefix: '/search', description: 'one basic search (1 credit)' },
      { unit: 'request', price: 0.008, measure: 'request', pathPrefix: '/extract', description: 'one basic extraction of up to 5 URLs (1 credit)' },
      { unit: 'request', price: 0.008, measure: 'request', description: 'any other call (crawl, map), charged as 1 credit' },
    ],
  },
  // GETs through the proxy: none (not the account's usage)
  proxyPaths: { get: [] },
} satisfies ProviderDef;
