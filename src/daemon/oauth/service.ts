import type { AppContext } from '../context/index.js';
import type { Principal } from '../auth/principal.js';
import { effectiveTier, type UserRow } from '../store/users.js';
import { CLI_CLIENT, upsertClient } from './clients.js';
import { ensureSigningKey } from './keys.js';
import { createTokenService, type TokenService } from './tokens.js';

const services = new WeakMap<AppContext, TokenService>();

/** The one token service of a daemon (its key caches are shared by every route). */
export function tokenService(ctx: AppContext): TokenService {
  let s = services.get(ctx);
  if (!s) {
    s = createTokenService(ctx.db, () => ctx.rootUrl());
    services.set(ctx, s);
  }
  return s;
}

/**
 * Start-up: the first signing key, the built-in `agw-cli` client, and the access-token
 * verifier the gateway's `requireAuth` calls for bearer tokens that are not agw_ keys.
 * The principal's tier is the user's CURRENT effective tier (a tier change applies at
 * once; the `tier` claim is informational); a deleted user's tokens stop working.
 */
export async function initOAuth(ctx: AppContext): Promise<void> {
  await ensureSigningKey(ctx.db);
  await upsertClient(ctx.db, CLI_CLIENT);
  const tokens = tokenService(ctx);
  ctx.verifyAccessToken = async (token: string): Promise<Principal | null> => {
    const c = await tokens.verifyAccessToken(token);
    if (!c) return null;
    const tier = await effectiveTier(ctx.db.hot ?? ctx.db, c.sub);
    if (!tier) return null;
    return { kind: 'oauth', userId: c.sub, tier, scopes: c.scope.split(' ').filter(Boolean), clientId: c.client_id };
  };
}

/** The user claims a scope releases (ID token and userinfo). */
export function userClaims(user: UserRow, tier: string, scopes: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (scopes.includes('profile')) {
    out.preferred_username = user.email;
    if (user.name) out.name = user.name;
  }
  if (scopes.includes('email')) out.email = user.email;
  if (scopes.includes('tier')) out.tier = tier;
  return out;
}
