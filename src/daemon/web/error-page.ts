import type { FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from './escape.js';
import { renderPage, sendPage, type PageUser } from './layout.js';

/**
 * Error pages of the web portal: the HTML 404 for unknown non-API paths (errors.ts) and
 * hidden skills, and what a failed form post of a page shows. API paths keep the JSON
 * Error body.
 */
export function errorPage(opts: { status: number; title: string; message: string; code?: string; user?: PageUser }): string {
  const body = `
<section class="card" aria-labelledby="err-h">
  <p class="big" aria-hidden="true">${opts.status}</p>
  <h1 id="err-h">${escapeHtml(opts.title)}</h1>
  <p>${escapeHtml(opts.message)}</p>
  ${opts.code ? `<p class="note">Error code: <code>${escapeHtml(opts.code)}</code></p>` : ''}
  <p><a href="/skills">Browse skills</a> · <a href="/">Go to the dashboard</a></p>
</section>`;
  return renderPage({ title: opts.title, body, user: opts.user });
}

export function sendNotFoundPage(reply: FastifyReply, what = 'There is no page at this address.', user?: PageUser): FastifyReply {
  return sendPage(reply, errorPage({ status: 404, title: 'Page not found', message: what, user }), 404);
}

/** True for a path the API owns (`/api`, `/api/…`): those answer JSON, never pages. */
export function isApiPath(url: string): boolean {
  const path = url.split('?')[0];
  return path === '/api' || path.startsWith('/api/') || path.startsWith('/.well-known/');
}

/** Whether an unknown path should get the HTML 404: a GET/HEAD outside the API that does not ask for JSON only. */
export function wantsHtmlNotFound(req: FastifyRequest): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  if (isApiPath(req.url)) return false;
  const accept = req.headers.accept ?? '';
  return !(accept.includes('application/json') && !accept.includes('text/html'));
}
