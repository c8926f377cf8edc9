import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context.js';
import { verifyApiKey } from '../store/keys.js';
import { effectiveTier } from '../store/users.js';
import { lookupSession, SESSION_COOKIE } from './sessions.js';

/** Who is calling. */
export type Principal =
  | { kind: 'key'; userId: string; tier: string; keyId: string }
  | { kind: 'oauth'; userId: string; tier: string; scopes: string[]; clientId: string }
  | { kind: 'session'; userId: string; tier: string; sessionId: string; csrfToken: string }
  | { kind: 'master' };

export type UserPrincipal = Exclude<Principal, { kind: 'master' }>;
export type CredentialKind = Principal['kind'];

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

export function bearerToken(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (!h || h.length < 8 || h.slice(0, 7).toLowerCase() !== 'bearer ') return undefined;
  return h.slice(7).trim() || undefined;
}

export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) {
      try {
        return decodeURIComponent(part.slice(i + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

/** Resolves the credentials on a request, or null when there are none or they are invalid. */
export async function authenticate(
  ctx: AppContext,
  req: FastifyRequest,
  allowed: readonly CredentialKind[],
): Promise<Principal | null> {
  const token = bearerToken(req);
  if (token) {
    if (token.startsWith('agw_')) {
      const master = ctx.config.masterToken;
      if (master && allowed.includes('master') && timingSafeEqual(sha256(token), sha256(master))) {
        return { kind: 'master' };
      }
      if (!allowed.includes('key')) return null;
      const key = await verifyApiKey(ctx.db, token);
      if (!key) return null;
      const tier = await effectiveTier(ctx.db, key.user_id);
      return tier ? { kind: 'key', userId: key.user_id, tier, keyId: key.id } : null;
    }
    if (allowed.includes('oauth') && ctx.verifyAccessToken) return ctx.verifyAccessToken(token);
    return null;
  }
  if (allowed.includes('session')) {
    const sid = readCookie(req, SESSION_COOKIE);
    if (sid) return lookupSession(ctx, sid);
  }
  return null;
}

export const GATEWAY_CREDENTIALS: readonly CredentialKind[] = ['key', 'oauth'];
export const ACCOUNT_CREDENTIALS: readonly CredentialKind[] = ['key', 'oauth', 'session'];

/**
 * A preHandler that requires one of `allowed` credential kinds and sets
 * `request.principal`; 401 UNAUTHORIZED with the Error body otherwise.
 */
export function requireAuth(ctx: AppContext, allowed: readonly CredentialKind[]) {
  return async function authHook(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const p = await authenticate(ctx, req, allowed);
    if (!p) {
      throw new AgwError(
        'UNAUTHORIZED',
        req.headers.authorization || req.headers.cookie
          ? 'invalid or revoked credentials'
          : 'missing credentials: send Authorization: Bearer <agw_ key or access token>',
      );
    }
    if (p.kind === 'session' && req.method !== 'GET' && req.method !== 'HEAD') checkCsrf(req, p.csrfToken);
    req.principal = p;
  };
}

/**
 * State-changing requests made with the session cookie must carry the session's CSRF
 * token (header `x-csrf-token`, or form field `_csrf`); bearer credentials need none.
 */
export function checkCsrf(req: FastifyRequest, expected: string): void {
  const header = req.headers['x-csrf-token'];
  const fromBody = (req.body as Record<string, unknown> | undefined)?._csrf;
  const got = typeof header === 'string' ? header : typeof fromBody === 'string' ? fromBody : '';
  const a = Buffer.from(got);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new AgwError('CSRF_FAILED', 'missing or wrong CSRF token: send the x-csrf-token header from GET /api/portal/me');
  }
}

/** The calling user; throws 403 for the master token on user-only endpoints. */
export function userOf(req: FastifyRequest): UserPrincipal {
  const p = req.principal;
  if (!p) throw new AgwError('UNAUTHORIZED', 'missing credentials');
  if (p.kind === 'master') throw new AgwError('FORBIDDEN', 'the master token has no user account; use a personal agw_ key');
  return p;
}
