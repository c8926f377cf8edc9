import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { AliasesResponse, type AliasesResponseT } from '../../shared/schemas/gateway.js';
import { tierOf } from '../money/calls.js';
import { gatewayPrincipal } from '../gateway/auth.js';
import { CHAT_PROVIDERS, hasKey, isAllowed, isChatProvider, proxyPrefix } from '../gateway/resolve.js';
import { smartRouteProviderOrder } from '../gateway/smart.js';
import type { RouteOptions } from './index.js';

/** The tier-scoped alias catalog (static for a given config, so built once per tier). */
export function aliasCatalog(config: ResolvedConfig, tierId: string): AliasesResponseT {
  const tier = tierOf(config, tierId);
  const ofTier = [...config.models.values()].filter((m) => tier.bands.includes(m.band) && config.providers.get(m.provider)?.enabled !== false);
  return {
    tier: tier.id,
    modelBands: tier.bands,
    aliases: [...config.aliases].map(([alias, targets]) => {
      const rows = targets.map((t) => ({ provider: t.provider, model: t.model, allowed: isChatProvider(t.provider) && isAllowed(config, tier.id, t) }));
      return { alias, targets: rows, allowed: rows.some((r) => r.allowed) };
    }),
    allowedModels: ofTier.filter((m) => isChatProvider(m.provider)).map((m) => ({ provider: m.provider, model: m.model, band: m.band })),
    smartRouteProviderOrder: smartRouteProviderOrder(config),
    unifiedChatProviders: [...CHAT_PROVIDERS],
    proxyModels: ofTier
      .filter((m) => !isChatProvider(m.provider))
      .map((m) => ({ provider: m.provider, model: m.model, band: m.band, proxy: proxyPrefix(m.provider), providerHasKey: hasKey(config, m.provider) })),
  };
}

/**
 * GET /api/gateway/aliases: authentication optional; anonymous callers and invalid bearer
 * tokens get the free tier's view (200, never 401).
 */
const aliases: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const cache = new Map<string, string>();
  app.get(
    '/gateway/aliases',
    {
      schema: {
        tags: ['gateway'],
        summary: 'Alias catalog for the caller’s tier (anonymous: free)',
        security: [{}, { bearer: [] }],
        response: { 200: AliasesResponse },
      },
    },
    async (req, reply) => {
      const p = await gatewayPrincipal(ctx, req, false).catch(() => null);
      const tier = tierOf(ctx.config, p?.tier ?? 'free').id;
      let body = cache.get(tier);
      if (!body) cache.set(tier, (body = JSON.stringify(aliasCatalog(ctx.config, tier))));
      reply.header('cache-control', 'public, max-age=300').header('vary', 'Authorization');
      return reply.type('application/json; charset=utf-8').serializer((x: unknown) => x as string).send(body as never);
    },
  );
};

export default aliases;
