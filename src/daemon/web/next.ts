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
