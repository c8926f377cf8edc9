import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';

/**
 * Where to go after login: only a same-origin relative path (`/…`, never `//host` or
 * `/\host`, no control characters); anything else falls back to the dashboard.
 */
export function safeNext(next: unknown): string {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2048) return '/';
  if (!next.startsWith('/') || next.startsWith('//') || next.includes('\\')) return '/';
  if (/[\u0000-\u001f\u007f]/.test(next)) return '/';
  try {
    const u = new URL(next, 'http://agw.invalid');
    if (u.origin !== 'http://agw.invalid') return '/';
    return `${u.pathname}${u.search}${u.hash}`;
  } catch {
    return '/';
  }
}

/** The portal's login page, returning to `next` afterwards (for the OAuth flow). */
export function loginPath(next?: string): string {
  const n = safeNext(next);
  return n === '/' ? '/login' : `/login?next=${encodeURIComponent(n)}`;
}

/**
 * For browser form posts: true unless an Origin (or, lacking it, Referer) header names
 * another origin than this server's. Non-browser clients send neither and pass.
 */
export function sameOriginPost(ctx: AppContext, req: FastifyRequest): boolean {
  const origin = req.headers.origin ?? refererOrigin(req.headers.referer);
  if (origin === undefined) return true;
  const allowed = new Set<string>([`${req.protocol}://${req.headers.host ?? ''}`]);
  try {
    allowed.add(new URL(ctx.rootUrl()).origin);
  } catch {
    /* no root URL yet */
  }
  return allowed.has(origin);
}

function refererOrigin(referer: string | undefined): string | undefined {
  if (!referer) return undefined;
  try {
    return new URL(referer).origin;
  } catch {
    return 'invalid';
  }
}
