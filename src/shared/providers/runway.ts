import type { ProviderDef } from './types.js';

/** Runway developer API; credits are $0.01 each and every call needs the X-Runway-Version header. */
export const runway = {
  id: 'runway',
  name: 'Runway',
  description: 'Gen-4 image-to-video, video-to-video and text-to-image generation through the Runway developer API.',
  category: 'Video',
  baseUrl: 'https://api.dev.runwayml.com',
  auth: { style: 'bearer' },
  extraHeaders: { 'X-Runway-Version': '2024-11-06' },
  usageFormat: 'units',
  usageType: 'image_generation',
  pricing: {
    kind: 'units',
    currency: 'USD',
    lastUpdated: '2025-11-01',
    sourceUrl: 'https://docs.dev.runwayml.com/guides/pricing/',
    units: [
      { unit: 'second', price: 0.05, measure: 'field', countField: 'duration', pathPrefix: '/v1/image_to_video', description: 'one second of gen4_turbo video (5 credits)' },
      { unit: 'second', price: 0.4, measure: 'field', countField: 'duration', pathPrefix: '/v1/text_to_video', description: 'one second of Veo 3 video (40 credits)' },
      { unit: 'generation', price: 0.75, measure: 'request', pathPrefix: '/v1/video_to_video', description: 'one gen4_aleph edit of a clip up to 5 seconds (15 credits per second)' },
      { unit: 'image', price: 0.08, measure: 'request', pathPrefix: '/v1/text_to_image', description: 'one gen4_image 1080p image (8 credits)' },
      { unit: 'request', price: 0.25, measure: 'request', description: 'any other generation task, flat estimate' },
    ],
  },
  // GETs through the proxy: one task by its id (https://docs.dev.runwayml.com/api/); not the organization
  proxyPaths: { get: [/^\/v1\/tasks\/[^/]+$/] },
} satisfies ProviderDef;
