import { createHash } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { usdToNano } from '../../shared/money.js';
import { USAGE_TYPES } from '../../shared/providers/index.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { Entitlements, type EntitlementsT } from '../../shared/schemas/gateway.js';
import type { AppContext } from '../context/index.js';
import type { KeyLimits } from '../money/key-limits.js';
import { moneyOf } from '../money/index.js';
import { tierOf } from '../money/calls.js';
import { gatewayUser, requireGatewayAuth } from '../gateway/auth.js';
import { entitledModels } from '../gateway/resolve.js';
import { keyAllowlist } from '../gateway/key-refusal.js';
import type { KeyPrincipal } from '../auth/key-cache.js';
import { isBounded } from '../keys/bounds.js';
import { keyEntitlement, keySpent } from '../keys/view.js';
import { walletView } from '../money/wallet-view.js';
import { requireScope } from '../auth/principal.js';
import { quotaOverrides } from '../store/quota-overrides.js';
import { quotaPeriod, quotaUsage } from '../money/quotas.js';
import { getWalletRow, walletState } from '../money/wallets.js';
import type { RouteOptions } from './index.js';

export const ENTITLEMENTS_TTL_SECONDS = 60;

/**
 * The entitlements of a user, as seen with `key` (an agw_ key principal): a limited key
 * adds `key` (its limits, what it spent and has left) and sees only the aliases it may call.
 */
export async function buildEntitlements(ctx: AppContext, userId: string, tierId: string, now = Date.now(), key?: KeyPrincipal): Promise<EntitlementsT> {
  const tier = tierOf(ctx.config, tierId);
  const period = quotaPeriod(now);
  const row = await getWalletRow(ctx.db, userId);
  if (!row) throw new Error(`wallet of ${userId} missing`);
  const overrides = await quotaOverrides(ctx.db, userId);
  const used = await quotaUsage(ctx.db, userId, period.key);
  const allowance = usdToNano(tier.monthlyAllowance);
  const state = walletState(row, allowance, now);
  // an allowance never drawn on was granted at the start of the month (keeps the ETag stable)
  if (row.last_allowance_at === null) state.lastAllowanceAt = allowance > 0 ? period.start : null;
  const quotas = Object.fromEntries(
    USAGE_TYPES.map((t) => {
      const limit = overrides.get(t) ?? tier.quotas[t] ?? 0;
      const n = used.get(t) ?? 0;
      const unlimited = limit < 0;
      return [t, { used: n, limit: unlimited ? -1 : limit, remaining: unlimited ? -1 : Math.max(0, limit - n), unlimited }];
    }),
  ) as EntitlementsT['quotas'];
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    userId,
    tier: tier.id,
    tierDisplayName: tier.displayName,
    capabilities: tier.capabilities,
    modelBands: tier.bands,
    wallet: walletView(state),
    period: { start: iso(period.start), end: iso(period.end), resetsAt: iso(period.end) },
    quotas,
    models: entitledModels(ctx.config, tier.id, key ? keyAllowlist(ctx, key) : null),
    cacheTtlSeconds: ENTITLEMENTS_TTL_SECONDS,
    ...(key && isBounded(key)
      ? {
          key: {
            ...keyEntitlement(key.keyId, key.limits, key.expiresAt, await keySpent(ctx.db, userId, key.keyId, key.limits, now), now),
            ...(await rateRemaining(ctx, key.keyId, key.limits, now)),
          },
        }
      : {}),
  };
}

/** What is left of a key's rate windows (the money engine's buckets), null where it has none. */
async function rateRemaining(ctx: AppContext, keyId: string, limits: KeyLimits | null, now: number) {
  if (!limits || (limits.rpm === null && limits.tpm === null)) return { requestsRemaining: null, tokensRemaining: null };
  const rate = (await moneyOf(ctx)).rateOf({ id: keyId, limits, period: null }, now);
  return { requestsRemaining: rate.requests?.remaining ?? null, tokensRemaining: rate.tokens?.remaining ?? null };
}

/** If-None-Match (weak comparison, RFC 9110 13.1.2): any listed tag, or *, matches. */
export function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === etag;
  });
}

/** GET /api/gateway/entitlements: private, 60 s, strong ETag, 304 on a matching If-None-Match. */
const entitlements: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/gateway/entitlements',
    {
      onRequest: requireGatewayAuth(ctx),
      schema: {
        tags: ['gateway'],
        summary: 'Tier, capabilities, wallet, quotas and the alias allowlist in one call',
        security: [{ bearer: [] }],
        response: { 200: Entitlements, 304: Type.Null({ description: 'Not modified (If-None-Match matched the ETag)' }), ...errorResponses(401, 403) },
      },
    },
    async (req, reply) => {
      const u = gatewayUser(req);
      requireScope(req, 'tier'); // an OAuth access token needs the tier scope
      const body = JSON.stringify(await buildEntitlements(ctx, u.userId, u.tier, Date.now(), u.kind === 'key' ? u : undefined));
      const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
      reply.header('cache-control', `private, max-age=${ENTITLEMENTS_TTL_SECONDS}`).header('etag', etag).header('vary', 'Authorization');
      if (etagMatches(req.headers['if-none-match'], etag)) return reply.code(304).send(null);
      return reply.code(200).type('application/json; charset=utf-8').serializer((x: unknown) => x as string).send(body as never);
    },
  );
};

export default entitlements;
