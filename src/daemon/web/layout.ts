import type { FastifyReply } from 'fastify';
import { assetUrl } from './assets.js';
import { escapeHtml } from './escape.js';
import { renderNav, type NavId } from './nav.js';
import { loginPath } from './next.js';

export { escapeHtml };

/**
 * The portal's page layout, shared by every server-rendered page (login, dashboard,
 * marketplace, creator, error pages and the OAuth consent page): a header with the site
 * navigation (nav.ts), the page, a footer. Pages are plain HTML: one stylesheet and at most one
 * script, both served by agw itself (no CDN), under a strict Content-Security-Policy.
 */

export interface PageUser {
  email: string;
  csrfToken: string;
}

export interface PageOptions {
  title: string;
  /** Trusted HTML: escape every user-provided string in it with `escapeHtml`. */
  body: string;
  /** The signed-in user: shows their email and a logout button in the header. */
  user?: PageUser;
  /** Load a script: `true` (or 'portal.js') the dashboard's, 'site.js' the small one of the other pages. */
  script?: boolean | 'portal.js' | 'site.js';
  /** The navigation entry of this page (marked as the current one). */
  nav?: NavId;
  /** Without a user: show a "Sign in" link that returns to this path. */
  signInNext?: string;
  /** Extra trusted HTML for <head> (e.g. meta tags). */
  head?: string;
}

export function renderPage(opts: PageOptions): string {
  const user = opts.user
    ? `<div class="who"><span class="email">${escapeHtml(opts.user.email)}</span>
      <form method="post" action="/api/portal/logout" class="inline">
        <input type="hidden" name="_csrf" value="${escapeHtml(opts.user.csrfToken)}">
        <button type="submit" class="link">Log out</button>
      </form></div>`
    : opts.signInNext
      ? `<div class="who"><a href="${escapeHtml(loginPath(opts.signInNext))}">Sign in</a></div>`
      : '';
  const script = opts.script === true ? 'portal.js' : opts.script || undefined;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(opts.title)} · agw</title>
<link rel="icon" href="${assetUrl('favicon.svg')}" type="image/svg+xml">
<link rel="stylesheet" href="${assetUrl('portal.css')}">
${opts.head ?? ''}${script ? `<script src="${assetUrl(script)}" defer></script>` : ''}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/">agw</a>${renderNav(opts.nav)}${user}</header>
<main id="main" tabindex="-1">
${opts.body}
</main>
<footer class="foot"><a href="/api/openapi.json">API reference (OpenAPI)</a></footer>
</body>
</html>
`;
}

/**
 * Sends a page with the portal's security headers (no caching: pages carry user data).
 * `formActions` adds origins a form on the page may post or be redirected to (Chrome
 * applies form-action to the redirect after a post, e.g. an OAuth client's redirect_uri).
 */
export function sendPage(reply: FastifyReply, html: string, status = 200, opts: { formActions?: string[] } = {}): FastifyReply {
  const formAction = ["'self'", ...(opts.formActions ?? [])].join(' ');
  return reply
    .status(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header(
      'content-security-policy',
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin')
    .send(html);
}
