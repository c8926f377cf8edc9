import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context/index.js';
import { isStateChanging, refuseCrossSite } from './cross-site.js';
import { usableKey } from './key-cache.js';
import type { CredentialKind, Principal, UserPrincipal } from '../context/principal.js';
import { lookupSession, SESSION_COOKIE } from './sessions.js';

export type { CredentialKind, KeyPrincipal, Principal, UserPrincipal } from '../context/principal.js';

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

/**
 * Resolves the credentials on a request, or null when there are none or they are invalid;
 * an expired agw_ key throws 401 KEY_EXPIRED.
 */
export async function authenticate(
  ctx: AppContext,
  req: FastifyRequest,
  allowed: readonly CredentialKind[],
): Promise<Principal | null> {
  const token = bearerToken(req);
  if (token) {
    // The master token may have any form; compared by hash so the time taken says nothing about it.
    const master = ctx.config.masterToken;
    if (master && allowed.includes('master') && timingSafeEqual(sha256(token), sha256(master))) {
      return { kind: 'master' };
    }
    if (token.startsWith('agw_')) {
      if (!allowed.includes('key')) return null;
      // one indexed query: key -> user -> active organization's tier
      return (await usableKey(ctx.db, token)) ?? null;
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

const AUTH_KINDS = Symbol.for('agw.authKinds');
type AuthHook = ((req: FastifyRequest, reply: FastifyReply) => Promise<void>) & { [AUTH_KINDS]?: readonly CredentialKind[] };

/**
 * Marks a hook as an authentication hook accepting `kinds`. The app then runs it before
 * body validation (a request without valid credentials gets 401, not 400) and the
 * OpenAPI document lists its security schemes. `requireAuth` hooks are marked already.
 */
export function markAuthHook<H extends (...args: never[]) => unknown>(hook: H, kinds: readonly CredentialKind[]): H {
  (hook as unknown as AuthHook)[AUTH_KINDS] = kinds;
  return hook;
}

/** The credential kinds an authentication hook accepts; undefined for any other function. */
export function authKindsOf(hook: unknown): readonly CredentialKind[] | undefined {
  return typeof hook === 'function' ? (hook as AuthHook)[AUTH_KINDS] : undefined;
}

/**
 * A hook that requires one of `allowed` credential kinds and sets `request.principal`;
 * 401 UNAUTHORIZED with the Error body otherwise. A state-changing request made with the
 * session cookie must not be cross-site (403 CSRF_FAILED, see cross-site.ts). Declare it as `preHandler` (or
 * `preValidation`): the app moves it before body validation either way.
 */
export function requireAuth(ctx: AppContext, allowed: readonly CredentialKind[]) {
  return markAuthHook(async function authHook(req: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const p = await authenticate(ctx, req, allowed);
    if (!p) {
      throw new AgwError(
        'UNAUTHORIZED',
        req.headers.authorization || req.headers.cookie
          ? 'invalid or revoked credentials'
          : 'missing credentials: send Authorization: Bearer <agw_ key or access token>',
      );
    }
    if (p.kind === 'session' && isStateChanging(req.method)) refuseCrossSite(ctx, req);
    req.principal = p;
  }, allowed);
}

/**
 * An OAuth access token must carry `scope` (403 INSUFFICIENT_SCOPE otherwise); keys,
 * sessions and the master token are not scoped and pass.
 */
export function requireScope(req: FastifyRequest, scope: string): void {
  const p = req.principal;
  if (p?.kind === 'oauth' && !p.scopes.includes(scope)) {
    throw new AgwError('INSUFFICIENT_SCOPE', `this access token lacks the ${scope} scope: sign in again asking for it`, { scope }, {
      'www-authenticate': `Bearer error="insufficient_scope", scope="${scope}"`,
    });
  }
}

/**
 * A key with limits, an expiry, or made with a limited key: it is not the account, and
 * reads only what it is scoped to (keys/service.ts's rule; the account's spend is not).
 */
export function isLimitedKey(p: Principal | undefined): boolean {
  return p?.kind === 'key' && (p.limits !== null || p.expiresAt !== null || (p.ancestors?.length ?? 0) > 0);
}

/** The calling user; throws 403 for the master token on user-only endpoints. */
export function userOf(req: FastifyRequest): UserPrincipal {
  const p = req.principal;
  if (!p) throw new AgwError('UNAUTHORIZED', 'missing credentials');
  if (p.kind === 'master') throw new AgwError('FORBIDDEN', 'the master token has no user account; use a personal agw_ key');
  return p;
}
