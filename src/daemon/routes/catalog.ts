import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PublicCatalog, type PublicCatalogT } from '../../shared/schemas/catalog.js';
import type { PriceLevel } from '../../shared/config/model-prices.js';
import type { ResolvedConfig, ResolvedProvider } from '../../shared/config/resolve.js';
import { BEDROCK_DEFAULT_REGION, VERTEX_DEFAULT_LOCATION, bedrockEndpoint, vertexEndpoint } from '../../shared/config/cloud.js';
import type { RouteOptions } from './index.js';

const round = (n: number) => Math.round(n * 1e6) / 1e6;

/** One price level's classes, raw and retail. */
function classes(l: PriceLevel, margin: number) {
  return {
    inputPer1M: l.inputPer1M,
    outputPer1M: l.outputPer1M,
    cachedInputPer1M: l.cachedInputPer1M,
    cacheWritePer1M: l.cacheWritePer1M,
    cacheWrite1hPer1M: l.cacheWrite1hPer1M,
    inputPer1MRetail: round(l.inputPer1M * margin),
    outputPer1MRetail: round(l.outputPer1M * margin),
    cachedInputPer1MRetail: round(l.cachedInputPer1M * margin),
    cacheWritePer1MRetail: round(l.cacheWritePer1M * margin),
    cacheWrite1hPer1MRetail: round(l.cacheWrite1hPer1M * margin),
  };
}

/**
 * The base URL the public catalog shows: a cloud's generic endpoint (for its region or
 * location), never the operator's own (an Azure resource's host names the resource, a VPC
 * or private endpoint the network); any other provider's as configured.
 */
const PUBLIC_BASE_URL: Record<string, (p: ResolvedProvider) => string> = {
  'azure-openai': (p) => p.def.baseUrl,
  bedrock: (p) => bedrockEndpoint(p.cloud.region ?? BEDROCK_DEFAULT_REGION),
  vertex: (p) => vertexEndpoint(p.cloud.location ?? VERTEX_DEFAULT_LOCATION),
};

/** The public price catalog, built from the provider catalog and the config (no secrets). */
export function buildPublicCatalog(config: ResolvedConfig): PublicCatalogT {
  const providers = [...config.providers.values()].filter((p) => p.enabled);
  return {
    providers: providers.map((p) => {
      const { def, keys, margin } = p;
      const baseUrl = PUBLIC_BASE_URL[def.id]?.(p) ?? p.baseUrl;
      const pr = def.pricing;
      const models =
        pr.kind === 'llm'
          ? [...config.models.values()]
              .filter((m) => m.provider === def.id)
              .map((m) => {
                const [base, ...tiers] = m.levels;
                return {
                  model: m.model,
                  ...classes(base, margin),
                  tiers: tiers.map((t) => ({ aboveInputTokens: t.above, ...classes(t, margin) })),
                  maxOutputTokens: m.maxOutputTokens,
                  contextTokens: m.contextTokens,
                };
              })
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
