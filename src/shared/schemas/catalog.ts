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
          inputPer1M: Type.Number(),
          outputPer1M: Type.Number(),
          cachedInputPer1M: Type.Number(),
          inputPer1MRetail: Type.Number(),
          outputPer1MRetail: Type.Number(),
          maxOutputTokens: Type.Integer({ description: 'the most output tokens one answer can carry; a call without max_tokens is held for this many' }),
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
