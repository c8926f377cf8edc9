import { GENAI_PRICES } from './genai-prices.js';
import { DEFAULT_CONTEXT_TOKENS, type DataPrice, type LlmModelPrice, type PriceTier, type TokenPrices } from './types.js';

/**
 * A model of the catalog as its provider module names it: what routing and holds need
 * (band, output limit, context window). Its prices come from the bundled price data
 * (genai-prices.ts, a snapshot of @pydantic/genai-prices) unless the module states its own
 * `price` (a documented override: the data is wrong or lacks the model).
 */
export interface CatalogModel {
  model: string;
  band: LlmModelPrice['band'];
  maxOutputTokens: number;
  /** absent: the data's context window, else DEFAULT_CONTEXT_TOKENS */
  contextTokens?: number;
  /** replaces the data's price for this model; say why beside it */
  price?: TokenPrices & { tiers?: readonly PriceTier[] };
}

/** The price of `key` (provider/model) in the data that is in force at `now` (the latest whose `from` has passed). */
export function dataPrice(key: string, now: number): DataPrice | undefined {
  const entry = GENAI_PRICES[key];
  if (!entry) return undefined;
  let inForce: DataPrice | undefined;
  for (const p of entry.prices) if (p.from === undefined || Date.parse(p.from) <= now) inForce = p;
  return inForce;
}

/** Set by the snapshot's generator only: a model the data lacks is let through unpriced instead of failing the catalog's load. */
export const pricesSync = { lenient: false };

/**
 * The catalog rows of an LLM provider: each model's prices from the data (in force when the
 * process started), or the module's own `price`. A model with neither fails the load.
 */
export function priced(provider: string, models: readonly CatalogModel[], now = Date.now()): LlmModelPrice[] {
  return models.map(({ price, contextTokens, ...m }) => {
    const key = `${provider}/${m.model}`;
    const p = price ?? dataPrice(key, now);
    if (!p) {
      if (pricesSync.lenient) return { ...m, inputPer1M: 0, outputPer1M: 0, cachedInputPer1M: 0, contextTokens: DEFAULT_CONTEXT_TOKENS };
      throw new Error(`${key}: no price in the bundled price data and none in the catalog module (npm run prices:sync, or a price override)`);
    }
    const { from: _from, ...prices } = p as DataPrice;
    return {
      ...m,
      ...prices,
      cachedInputPer1M: prices.cachedInputPer1M ?? prices.inputPer1M,
      contextTokens: contextTokens ?? GENAI_PRICES[key]?.contextTokens ?? DEFAULT_CONTEXT_TOKENS,
    };
  });
}
