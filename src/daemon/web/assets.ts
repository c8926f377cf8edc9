import { createHash } from 'node:crypto';
import { PORTAL_CSS } from './assets/portal-css.js';
import { PORTAL_JS } from './assets/portal-js.js';
import { SITE_JS } from './assets/site-js.js';
import { FAVICON_SVG } from './assets/favicon-svg.js';

/**
 * The portal's static files, held in memory. URLs carry a content hash (`?v=`), so
 * browsers may cache them for a long time and a new agw version is fetched at once.
 */
export interface Asset {
  body: string;
  type: string;
  etag: string;
  hash: string;
}

function asset(body: string, type: string): Asset {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, 12);
  return { body, type, etag: `"${hash}"`, hash };
}

export const ASSETS: Record<string, Asset> = {
  'portal.css': asset(PORTAL_CSS, 'text/css; charset=utf-8'),
  'portal.js': asset(PORTAL_JS, 'text/javascript; charset=utf-8'),
  'site.js': asset(SITE_JS, 'text/javascript; charset=utf-8'),
  'favicon.svg': asset(FAVICON_SVG, 'image/svg+xml'),
};

export function assetUrl(name: keyof typeof ASSETS & string): string {
  return `/assets/${name}?v=${ASSETS[name].hash}`;
}
