import { Type, type Static } from 'typebox';

const Category = Type.Union([
  Type.Literal('LLM'),
  Type.Literal('Image'),
  Type.Literal('Video'),
  Type.Literal('Audio'),
  Type.Literal('Search'),
  Type.Literal('3D'),
  Type.Literal('Other'),
]);

/**
 * A price level's classes, raw (what the provider charges) and retail (× the provider's
 * margin), USD per 1M tokens; a class the model does not price shows its input price.
 */
const Classes = {
  inputPer1M: Type.Number(),
  outputPer1M: Type.Number({ description: 'output tokens, reasoning included' }),
  cachedInputPer1M: Type.Number({ description: 'cache reads' }),
  cacheWritePer1M: Type.Number({ description: '5-minute cache writes' }),
  cacheWrite1hPer1M: Type.Number({ description: '1-hour cache writes' }),
  inputPer1MRetail: Type.Number(),
  outputPer1MRetail: Type.Number(),
  cachedInputPer1MRetail: Type.Number(),
  cacheWritePer1MRetail: Type.Number(),
  cacheWrite1hPer1MRetail: Type.Number(),
};

export const CatalogProvider = Type.Object(
  {
    id: Type.String(),
    description: Type.String(),
    category: Category,
    baseUrl: Type.String({ format: 'uri' }),
    hasKey: Type.Boolean(),
    effectiveMargin: Type.Number(),
    pricing: Type.Object({
      kind: Type.Union([Type.Literal('llm'), Type.Literal('units')]),
      currency: Type.String(),
      models: Type.Array(
        Type.Object({
          model: Type.String(),
          ...Classes,
          tiers: Type.Array(Type.Object({ aboveInputTokens: Type.Integer({ description: 'this tier prices calls whose prompt tokens are strictly above it, all their tokens' }), ...Classes }), {
            description: 'dearer prices above a prompt size, ascending; empty: one price at every size',
          }),
          maxOutputTokens: Type.Integer({ description: 'the most output tokens one answer can carry; a call’s output cap is at most this' }),
          contextTokens: Type.Integer({ description: 'the context window; context held at the provider is held at this many tokens' }),
        }),
      ),
      units: Type.Array(
        Type.Object({
          unit: Type.String(),
          description: Type.String(),
          price: Type.Number(),
          priceRetail: Type.Number(),
        }),
      ),
      lastUpdated: Type.String({ format: 'date' }),
      sourceUrl: Type.String({ format: 'uri' }),
    }),
  },
  { title: 'CatalogProvider' },
);

export const PublicCatalog = Type.Object(
  { providers: Type.Array(CatalogProvider) },
  { title: 'PublicCatalog' },
);
export type PublicCatalogT = Static<typeof PublicCatalog>;
