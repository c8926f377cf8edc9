import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PublicCatalog, type PublicCatalogT } from '../../shared/schemas/catalog.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { RouteOptions } from './index.js';

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** The public price catalog, built from the provider catalog and the config (no secrets). */
export function buildPublicCatalog(config: ResolvedConfig): PublicCatalogT {
  const providers = [...config.providers.values()].filter((p) => p.enabled);
  return {
    providers: providers.map(({ def, baseUrl, keys, margin }) => {
      const pr = def.pricing;
      const models =
        pr.kind === 'llm'
          ? [...config.models.values()]
              .filter((m) => m.provider === def.id)
              .map((m) => ({
                model: m.model,
                inputPer1M: m.inputPer1M,
                outputPer1M: m.outputPer1M,
                cachedInputPer1M: m.cachedInputPer1M,
                inputPer1MRetail: round(m.inputPer1M * margin),
                outputPer1MRetail: round(m.outputPer1M * margin),
                maxOutputTokens: m.maxOutputTokens,
              }))
          : [];
      const units =
        pr.kind === 'units'
          ? pr.units.map((u) => ({ unit: u.unit, description: u.description, price: u.price, priceRetail: round(u.price * margin) }))
          : [];
      return {
        id: def.id,
        description: def.description,
        category: def.category,
        baseUrl,
        hasKey: keys.length > 0,
        effectiveMargin: margin,
        pricing: { kind: pr.kind, currency: pr.currency, models, units, lastUpdated: pr.lastUpdated, sourceUrl: pr.sourceUrl },
      };
    }),
  };
}

const catalog: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const body = JSON.stringify(buildPublicCatalog(ctx.config));
  app.get(
    '/portal/providers/public',
    {
      schema: {
        tags: ['catalog'],
        summary: 'Public price catalog: providers, models, units, raw and retail prices',
        response: { 200: PublicCatalog },
      },
    },
    async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return reply.type('application/json; charset=utf-8').serializer((x: unknown) => x as string).send(body as never);
    },
  );
};

export default catalog;
