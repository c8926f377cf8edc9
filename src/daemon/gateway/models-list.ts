import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { getProvider } from '../../shared/providers/index.js';
import { tierOf } from '../money/calls.js';
import { allowsTarget, type Allowlist } from './model-allowlist.js';
import { aliasTarget, hasKey, isChatProvider } from './resolve.js';

/**
 * GET /gateway/v1/models: every alias and model the caller may call through unified chat
 * (its tier's bands, its key's list, providers with a key here), in the OpenAI Models
 * list's shape. A model id two providers share is listed as provider/model.
 */
export interface ModelRow {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}

const createdOf = (provider: string) => Math.floor(Date.parse(getProvider(provider)?.pricing.lastUpdated ?? '2025-01-01') / 1000);

export function modelsList(config: ResolvedConfig, tier: string, keyModels: Allowlist | null | undefined): { object: 'list'; data: ModelRow[] } {
  const data: ModelRow[] = [];
  for (const alias of config.aliases.keys()) {
    const t = aliasTarget(config, tier, alias, keyModels);
    if (t && hasKey(config, t.provider)) data.push({ id: alias, object: 'model', created: createdOf(t.provider), owned_by: 'agw' });
  }
  const bands = tierOf(config, tier).bands;
  const models = [...config.models.values()].filter(
    (m) => isChatProvider(m.provider) && bands.includes(m.band) && hasKey(config, m.provider) && (!keyModels || allowsTarget(keyModels, m)),
  );
  const seen = new Map<string, number>();
  for (const m of models) seen.set(m.model, (seen.get(m.model) ?? 0) + 1);
  for (const m of models) {
    data.push({ id: seen.get(m.model)! > 1 ? `${m.provider}/${m.model}` : m.model, object: 'model', created: createdOf(m.provider), owned_by: m.provider });
  }
  return { object: 'list', data };
}
