import type { SmartRouteClass, Target } from '../../shared/config/defaults.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { ModelBand } from '../../shared/providers/index.js';
import { priceRow } from '../money/pricing.js';
import type { Gateway } from './runtime.js';
import { chatApiOf } from './cloud-chat.js';

/**
 * Smart-route candidates: the class's targets from config, ordered by
 *   best-cheap-llm    retail price (inputPer1M + outputPer1M, x the provider's margin)
 *   best-fast-llm     recorded time to first byte (EWMA); targets never measured go first,
 *                     in config order, so every candidate gets measured
 *   best-quality-llm  band, premium first
 * with ties kept in config order. Only providers that are enabled, have a key, have a
 * chat API for the model (any LLM provider of the catalog, a cloud's model in the format it
 * takes: cloud-chat.ts), and whose circuit breaker is closed take part.
 */
const BAND_RANK: Record<ModelBand, number> = { premium: 3, pro: 2, standard: 1, lite: 0 };

export function retailPrice(config: ResolvedConfig, t: Target): number {
  const row = priceRow(config, t.provider, t.model);
  const margin = config.providers.get(t.provider)?.margin ?? config.margin;
  return row ? (row.inputPer1M + row.outputPer1M) * margin : Number.POSITIVE_INFINITY;
}

export function routable(config: ResolvedConfig, t: Target): boolean {
  const p = config.providers.get(t.provider);
  return Boolean(p && p.enabled && p.keys.length > 0 && chatApiOf(p.def, t.model));
}

function sortKey(config: ResolvedConfig, gw: Gateway | undefined, cls: SmartRouteClass, t: Target): number {
  switch (cls) {
    case 'best-cheap-llm':
      return retailPrice(config, t);
    case 'best-fast-llm':
      return gw?.latency.get(`${t.provider}/${t.model}`) ?? -1;
    case 'best-quality-llm':
      return -(BAND_RANK[config.models.get(`${t.provider}/${t.model}`)?.band ?? 'lite'] ?? 0);
  }
}

/** The class's targets in routing order (breaker-open providers left out when `gw` is given). */
export function smartCandidates(config: ResolvedConfig, cls: SmartRouteClass, gw?: Gateway): Target[] {
  return config.smartRoutes[cls]
    .filter((t) => routable(config, t) && !gw?.breaker.isOpen(t.provider))
    .map((t, i) => ({ t, i, k: sortKey(config, gw, cls, t) }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((x) => x.t);
}

/** Provider ids in smart-routing priority (best-cheap-llm order, each once), for the alias catalog. */
export function smartRouteProviderOrder(config: ResolvedConfig): string[] {
  return [...new Set(smartCandidates(config, 'best-cheap-llm').map((t) => t.provider))];
}
