import type { Queryable } from '../store/db.js';
import { checkClient, type AuthorizeParams } from './authorize.js';

/**
 * A CSP source for a redirect target: its origin (`http://127.0.0.1:53682`), or the scheme
 * of a private-use URI (`com.example.app:`), whose origin is opaque.
 */
export function cspSource(uri: string): string | null {
  try {
    const u = new URL(uri);
    return u.origin !== 'null' ? u.origin : u.protocol;
  } catch {
    return null;
  }
}

/**
 * The origins the portal's login form may end up at after it is posted. Chromium applies
 * the page's `form-action` to every redirect that follows a form post, so a sign-in that
 * returns to an OAuth authorization request (303 to `/api/oauth/authorize`, then 302 to the
 * client's redirect URI, e.g. `agw login`'s loopback callback) needs that redirect URI's
 * origin. Only a client's registered (validated) redirect URI is ever added; anything else
 * adds nothing.
 */
export async function loginFormActions(db: Queryable, next: string): Promise<string[]> {
  let u: URL;
  try {
    u = new URL(next, 'http://agw.invalid');
  } catch {
    return [];
  }
  if (u.origin !== 'http://agw.invalid' || !u.pathname.endsWith('/oauth/authorize')) return [];
  const p: AuthorizeParams = {};
  for (const [k, v] of u.searchParams) (p as Record<string, string>)[k] = v;
  try {
    const { redirectUri } = await checkClient(db, p);
    const source = cspSource(redirectUri);
    return source ? [source] : [];
  } catch {
    return [];
  }
}
