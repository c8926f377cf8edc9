import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { getProvider } from '../../shared/providers/index.js';
import { tierOf } from '../money/calls.js';
import { allowsTarget, type Allowlist } from './model-allowlist.js';
import { aliasTarget, hasKey, isChatProvider } from './resolve.js';

/**
 * GET /gateway/v1/models: every alias and model the caller may call through unified chat
 * (its tier's bands, its key's list, providers with a key here), in the OpenAI Models
 * list's shape (https://platform.openai.com/docs/api-reference/models/list) and, on the
 * same rows, the Anthropic one's (https://docs.claude.com/en/api/models-list: `type`,
 * `display_name`, `created_at`, and `has_more`, `first_id`, `last_id`), so both SDKs' list
 * calls read it. A model id two providers share is listed as provider/model.
 */
export interface ModelRow {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  type: 'model';
  display_name: string;
  created_at: string;
}

export interface ModelsListT {
  object: 'list';
  data: ModelRow[];
  has_more: false;
  first_id: string | null;
  last_id: string | null;
}

const createdOf = (provider: string) => Math.floor(Date.parse(getProvider(provider)?.pricing.lastUpdated ?? '2025-01-01') / 1000);

function row(id: string, provider: string, ownedBy: string): ModelRow {
  const created = createdOf(provider);
  return { id, object: 'model', created, owned_by: ownedBy, type: 'model', display_name: id, created_at: new Date(created * 1000).toISOString() };
}

export function modelsList(config: ResolvedConfig, tier: string, keyModels: Allowlist | null | undefined): ModelsListT {
  const data: ModelRow[] = [];
  for (const alias of config.aliases.keys()) {
    const t = aliasTarget(config, tier, alias, keyModels);
    if (t && hasKey(config, t.provider)) data.push(row(alias, t.provider, 'agw'));
  }
  const bands = tierOf(config, tier).bands;
  const models = [...config.models.values()].filter(
    (m) => isChatProvider(m.provider) && bands.includes(m.band) && hasKey(config, m.provider) && (!keyModels || allowsTarget(keyModels, m)),
  );
  const seen = new Map<string, number>();
  for (const m of models) seen.set(m.model, (seen.get(m.model) ?? 0) + 1);
  for (const m of models) data.push(row(seen.get(m.model)! > 1 ? `${m.provider}/${m.model}` : m.model, m.provider, m.provider));
  return { object: 'list', data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
