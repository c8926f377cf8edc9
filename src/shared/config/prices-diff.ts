import { GENAI_PRICES, GENAI_PRICES_VERSION } from '../providers/genai-prices.js';
import { findModelPrice } from '../providers/index.js';
import { dataPrice } from '../providers/prices.js';
import { priceLevels, type PriceLevel } from './model-prices.js';
import type { ResolvedConfig } from './resolve.js';

/** One price where the config in force differs from the bundled price data. */
export interface PriceDifference {
  provider: string;
  model: string;
  /** the class, e.g. `inputPer1M` or `tiers[200000].outputPer1M`; `model` when the data lacks the model */
  price: string;
  /** USD per 1M tokens: in force (config over catalog), and in the data (null: not there) */
  inForce: number | null;
  data: number | null;
  /** where the price in force comes from: the config's `models:`, or the catalog module's own override */
  source: 'config' | 'catalog';
}

export interface PricesDiff {
  dataVersion: string;
  /** LLM models in force, and how many of them the data prices */
  models: number;
  covered: number;
  items: PriceDifference[];
}

const CLASSES = ['inputPer1M', 'cachedInputPer1M', 'cacheWritePer1M', 'cacheWrite1hPer1M', 'outputPer1M'] as const;

const byLevel = (levels: readonly PriceLevel[]) => new Map(levels.map((l) => [l.above, l]));
const name = (above: number, cls: string) => (above === 0 ? cls : `tiers[${above}].${cls}`);

/**
 * Where the prices in force (`config`: the catalog with the config's `models:` over it)
 * differ from the bundled @pydantic/genai-prices data, class by class and tier by tier,
 * every class resolved as agw charges it (an unpriced class is its level's input price).
 */
export function pricesDiff(config: ResolvedConfig, now = Date.now()): PricesDiff {
  const items: PriceDifference[] = [];
  let covered = 0;
  for (const m of config.models.values()) {
    const key = `${m.provider}/${m.model}`;
    const catalog = findModelPrice(m.provider, m.model);
    const d = dataPrice(key, now);
    if (!d || !GENAI_PRICES[key]) {
      items.push({ provider: m.provider, model: m.model, price: 'model', inForce: null, data: null, source: catalog ? 'catalog' : 'config' });
      continue;
    }
    covered++;
    const data = byLevel(priceLevels({ ...d, cachedInputPer1M: d.cachedInputPer1M ?? d.inputPer1M }, d.tiers));
    const cat = catalog ? byLevel(priceLevels(catalog, catalog.tiers)) : undefined;
    const ours = byLevel(m.levels);
    for (const above of new Set([...data.keys(), ...ours.keys()])) {
      const ourRaw = above === 0 ? m : m.tiers.find((t) => t.aboveInputTokens === above);
      const dataRaw = above === 0 ? d : d.tiers?.find((t) => t.aboveInputTokens === above);
      for (const cls of CLASSES) {
        const mine = ours.get(above)?.[cls] ?? null;
        const theirs = data.get(above)?.[cls] ?? null;
        if (mine === theirs) continue;
        // a cache-write class neither side prices is its input price on both: already shown
        if (cls.startsWith('cacheWrite') && ourRaw?.[cls] === undefined && dataRaw?.[cls] === undefined) continue;
        const fromCatalog = cat !== undefined && (cat.get(above)?.[cls] ?? null) === mine;
        items.push({ provider: m.provider, model: m.model, price: name(above, cls), inForce: mine, data: theirs, source: fromCatalog ? 'catalog' : 'config' });
      }
    }
  }
  return { dataVersion: GENAI_PRICES_VERSION, models: config.models.size, covered, items };
}
