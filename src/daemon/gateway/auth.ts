import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context.js';
import { bearerToken, GATEWAY_CREDENTIALS, markAuthHook, type UserPrincipal } from '../auth/principal.js';
import { verifyKeyCached } from '../auth/key-cache.js';

/**
 * Gateway credentials: an agw_ key or an OAuth access token, as `Authorization: Bearer`
 * or, where `xApiKey` is set (the proxy: the Anthropic SDK sends its key there), as
 * `x-api-key`. One store query per agw_ key (key, user and effective tier joined).
 */
export async function gatewayPrincipal(
  ctx: AppContext,
  req: FastifyRequest,
  xApiKey: boolean,
): Promise<UserPrincipal | null> {
  let token = bearerToken(req);
  if (!token && xApiKey) {
    const h = req.headers['x-api-key'];
    if (typeof h === 'string' && h.trim()) token = h.trim();
  }
  if (!token) return null;
  if (token.startsWith('agw_')) {
    const k = await verifyKeyCached(ctx.db, token);
    return k ? { kind: 'key', userId: k.userId, tier: k.tier, keyId: k.keyId, storeVersion: k.storeVersion } : null;
  }
  if (!ctx.verifyAccessToken) return null;
  const p = await ctx.verifyAccessToken(token);
  return p && p.kind !== 'master' ? p : null;
}

/** An onRequest hook: 401 UNAUTHORIZED unless the request carries a valid gateway credential. */
export function requireGatewayAuth(ctx: AppContext, xApiKey = false) {
  return markAuthHook(async function gatewayAuth(req: FastifyRequest): Promise<void> {
    const p = await gatewayPrincipal(ctx, req, xApiKey);
    if (!p) {
      const sent = req.headers.authorization || (xApiKey && req.headers['x-api-key']);
      throw new AgwError(
        'UNAUTHORIZED',
        sent ? 'invalid or revoked credentials' : 'missing credentials: send Authorization: Bearer <agw_ key or access token>',
      );
    }
    req.principal = p;
  }, GATEWAY_CREDENTIALS);
}

/**
 * The store version a key was checked at (SQLite), for `reserve`: the call's admission is
 * linearized at its authentication, so a call reads the store's version once, not twice.
 */
export function storeVersionOf(u: UserPrincipal): number | undefined {
  return u.kind === 'key' ? u.storeVersion : undefined;
}

/** The principal set by `requireGatewayAuth`. */
export function gatewayUser(req: FastifyRequest): UserPrincipal {
  const p = req.principal;
  if (!p || p.kind === 'master') throw new AgwError('UNAUTHORIZED', 'missing credentials');
  return p;
}
