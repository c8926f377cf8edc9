import { calcPrice, type ModelPrice, type TieredPrices } from '@pydantic/genai-prices';
import type { DataModel, DataPrice, PriceTier } from '../../src/shared/providers/types.js';

/**
 * Writes src/shared/providers/genai-prices.ts: the prices of the catalog's LLM models as the
 * installed @pydantic/genai-prices states them, in agw's price shape. Only the package's
 * data is used (calcPrice to find the model its own matching rules give for an id); the
 * arithmetic stays agw's. Time-of-day prices (off-peak discounts) are taken at their
 * dearest, class by class: a static price never under-bills.
 */

const CLASSES = {
  input_mtok: 'inputPer1M',
  output_mtok: 'outputPer1M',
  cache_read_mtok: 'cachedInputPer1M',
  cache_write_mtok: 'cacheWritePer1M',
  cache_write_1h_mtok: 'cacheWrite1hPer1M',
} as const;
type Cls = (typeof CLASSES)[keyof typeof CLASSES];

const isTiered = (v: unknown): v is TieredPrices => typeof v === 'object' && v !== null && 'base' in v;

/** The price of one class for prompts strictly above `above` (0: the base price). */
function at(v: number | TieredPrices, above: number): number {
  if (!isTiered(v)) return v;
  let p = v.base;
  for (const t of [...v.tiers].sort((a, b) => a.start - b.start)) if (above >= t.start) p = t.price;
  return p;
}

function convert(mp: ModelPrice): { price: Omit<DataPrice, 'from'>; unpriced: string[] } {
  const starts = new Set<number>();
  const unpriced: string[] = [];
  const known: [Cls, number | TieredPrices][] = [];
  for (const [k, v] of Object.entries(mp)) {
    if (v === undefined) continue;
    const cls = CLASSES[k as keyof typeof CLASSES];
    if (!cls) {
      unpriced.push(k);
      continue;
    }
    known.push([cls, v]);
    if (isTiered(v)) for (const t of v.tiers) starts.add(t.start);
  }
  const level = (above: number) => Object.fromEntries(known.map(([c, v]) => [c, at(v, above)])) as Record<Cls, number>;
  const base = level(0);
  if (base.inputPer1M === undefined || base.outputPer1M === undefined) throw new Error('a price without input_mtok or output_mtok');
  const tiers: PriceTier[] = [...starts].sort((a, b) => a - b).map((s) => ({ aboveInputTokens: s, ...level(s) }));
  return { price: { ...base, ...(tiers.length ? { tiers } : {}) }, unpriced: unpriced.sort() };
}

/** The dearest of several prices, class by class (and tier by tier). */
function dearest(prices: Omit<DataPrice, 'from'>[]): Omit<DataPrice, 'from'> {
  const out: Record<string, unknown> = {};
  for (const p of prices)
    for (const [k, v] of Object.entries(p)) {
      if (typeof v === 'number') out[k] = Math.max(v, (out[k] as number | undefined) ?? 0);
      else out[k] = v; // tiers: time-of-day prices with tiers do not occur in the data
    }
  return out as unknown as Omit<DataPrice, 'from'>;
}

export function dataModel(provider: string, model: string): DataModel | undefined {
  const r = calcPrice({ input_tokens: 1, output_tokens: 1 }, model, { providerId: provider });
  if (!r) return undefined;
  const m = r.model;
  const list = Array.isArray(m.prices) ? m.prices : [{ prices: m.prices }];
  const unpriced = new Set<string>();
  const byDate = new Map<string | undefined, Omit<DataPrice, 'from'>[]>();
  for (const c of list) {
    const { price, unpriced: u } = convert(c.prices);
    u.forEach((k) => unpriced.add(k));
    const from = c.constraint?.type === 'start_date' ? c.constraint.start_date : undefined;
    byDate.set(from, [...(byDate.get(from) ?? []), price]);
  }
  const prices: DataPrice[] = [...byDate.entries()]
    .sort(([a], [b]) => (a ?? '').localeCompare(b ?? ''))
    .map(([from, ps]) => ({ ...(from ? { from } : {}), ...dearest(ps) }));
  return { id: m.id, ...(m.context_window ? { contextTokens: m.context_window } : {}), prices, ...(unpriced.size ? { unpriced: [...unpriced].sort() } : {}) };
}

/** The text of genai-prices.ts for these provider/model keys. */
export function snapshotText(keys: readonly string[], version: string): string {
  const lines = keys.map((key) => {
    const [provider, ...rest] = key.split('/');
    const d = dataModel(provider, rest.join('/'));
    return d ? `  ${JSON.stringify(key)}: ${JSON.stringify(d)},` : `  // ${key}: not in the data`;
  });
  return `/**
 * GENERATED from @pydantic/genai-prices ${version} (MIT, https://github.com/pydantic/genai-prices):
 * do not edit; \`npm run prices:sync\` rewrites it from the installed package. The prices of
 * the catalog's LLM models in agw's shape (USD per 1M tokens; a price with \`from\` is in
 * force from that date on; time-of-day discounts taken at their dearest). The provider
 * modules take their prices from here (prices.ts); \`agw admin prices diff\` shows where the
 * config differs.
 */
import type { DataModel } from './types.js';

export const GENAI_PRICES_VERSION = ${JSON.stringify(version)};

export const GENAI_PRICES: Readonly<Record<string, DataModel>> = {
${lines.join('\n')}
};
`;
}
