import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context/index.js';
import { bearerToken, GATEWAY_CREDENTIALS, markAuthHook, type UserPrincipal } from '../auth/principal.js';
import { usableCachedKey, usableKey } from '../auth/key-cache.js';
import type { Caller } from '../money/calls.js';
import { markPhase } from '../telemetry/phases.js';

/**
 * Gateway credentials: an agw_ key or an OAuth access token, as `Authorization: Bearer`
 * or, where `xApiKey` is set (the proxy: the Anthropic SDK sends its key there), as
 * `x-api-key`. One store query per agw_ key (key, user and effective tier joined). An
 * expired key throws 401 KEY_EXPIRED.
 */
export async function gatewayPrincipal(ctx: AppContext, req: FastifyRequest, xApiKey: boolean): Promise<UserPrincipal | null> {
  const token = presentedToken(req, xApiKey);
  if (!token) return null;
  if (token.startsWith('agw_')) return (await usableKey(ctx.db, token)) ?? null;
  if (!ctx.verifyAccessToken) return null;
  const p = await ctx.verifyAccessToken(token);
  return p && p.kind !== 'master' ? p : null;
}

/** The credential a request presents (Bearer, else x-api-key where `xApiKey`): the hook's and the proxy's fast lane's. */
export function presentedToken(req: Pick<FastifyRequest, 'headers'>, xApiKey: boolean): string | undefined {
  const token = bearerToken(req as FastifyRequest);
  if (token || !xApiKey) return token;
  const h = req.headers['x-api-key'];
  return typeof h === 'string' && h.trim() ? h.trim() : undefined;
}

function unauthorized(req: FastifyRequest, xApiKey: boolean): AgwError {
  const sent = req.headers.authorization || (xApiKey && req.headers['x-api-key']);
  return new AgwError('UNAUTHORIZED', sent ? 'invalid or revoked credentials' : 'missing credentials: send Authorization: Bearer <agw_ key or access token>');
}

/**
 * An onRequest hook: 401 UNAUTHORIZED unless the request carries a valid gateway
 * credential. A callback hook rather than an async one: a key still in memory (the common
 * case) is accepted synchronously, without a promise on every call's path.
 */
export function requireGatewayAuth(ctx: AppContext, xApiKey = false) {
  const hook = markAuthHook(function gatewayAuth(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
    const token = presentedToken(req, xApiKey);
    let hit;
    try {
      hit = token?.startsWith('agw_') ? usableCachedKey(ctx.db, token) : undefined;
    } catch (err) {
      return done(err as Error); // expired
    }
    if (hit) {
      markPhase('authenticated');
      req.principal = hit;
      return done();
    }
    gatewayPrincipal(ctx, req, xApiKey).then(
      (p) => {
        if (!p) return done(unauthorized(req, xApiKey));
        req.principal = p;
        markPhase('authenticated');
        done();
      },
      (err: Error) => done(err),
    );
  }, GATEWAY_CREDENTIALS);
  gatewayHooks.set(hook, { xApiKey });
  return hook;
}

const gatewayHooks = new WeakMap<object, { xApiKey: boolean }>();

/** What a `requireGatewayAuth` hook takes (x-api-key too, or Bearer only); undefined for any other function (the fast lane's check). */
export function gatewayAuthOf(hook: unknown): { xApiKey: boolean } | undefined {
  return typeof hook === 'function' ? gatewayHooks.get(hook) : undefined;
}

/**
 * Who a metered call is admitted for, from its principal. A key carries the store version
 * it was checked at (SQLite): the call's admission is linearized at its authentication, so
 * a call reads the store's version once, not twice.
 */
export function callerOf(u: UserPrincipal): Caller {
  return u.kind === 'key'
    ? { userId: u.userId, tier: u.tier, keyId: u.keyId, keyLimits: u.limits, keyAncestors: u.ancestors, storeVersion: u.storeVersion }
    : { userId: u.userId, tier: u.tier, keyId: null, keyLimits: null, keyAncestors: undefined, storeVersion: undefined };
}

/** The principal set by `requireGatewayAuth`. */
export function gatewayUser(req: FastifyRequest): UserPrincipal {
  const p = req.principal;
  if (!p || p.kind === 'master') throw new AgwError('UNAUTHORIZED', 'missing credentials');
  return p;
}
