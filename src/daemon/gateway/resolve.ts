import type { Target } from '../../shared/config/defaults.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { didYouMean, didYouMeanText } from '../../shared/did-you-mean.js';
import { AgwError, type ErrorCode } from '../../shared/errors.js';
import { PROVIDERS, type ModelBand, type ProviderDef } from '../../shared/providers/index.js';
import { tierOf } from '../money/calls.js';
import { allowsTarget, KeyModelRefusal, type Allowlist } from './model-allowlist.js';

/**
 * Model resolution for unified chat: every LLM provider of the catalog with a chat API
 * (`chat` and `chatPath` in its module, or a cloud's `chatUpstream`) serves it, in its own
 * format (the common format, the messages format for anthropic, Gemini's for google; a
 * cloud's per model: cloud-chat.ts). A model is allowed when its
 * band (config.models) is one of the caller's tier bands.
 */
export const CHAT_PROVIDERS: readonly string[] = (Object.values(PROVIDERS) as ProviderDef[])
  .filter((d) => d.category === 'LLM' && ((d.chat && d.chatPath) || d.chatUpstream))
  .map((d) => d.id);
export type ChatProvider = string;

const CHAT_SET = new Set(CHAT_PROVIDERS);

/** The spec's codes for the first two chat providers' missing keys; any other names the provider. */
const KEY_MISSING: Record<string, ErrorCode> = { openai: 'ALPHA_KEY_MISSING', anthropic: 'BETA_KEY_MISSING' };

/** Where a provider's credentials go when they are not an apiKey. */
const CREDENTIALS: Record<string, string> = { bedrock: 'providers.bedrock.accessKeyId and secretAccessKey', vertex: 'providers.vertex.serviceAccount' };

export function isChatProvider(p: string): boolean {
  return CHAT_SET.has(p);
}

export function bandOf(config: ResolvedConfig, t: Target): ModelBand | undefined {
  return config.models.get(`${t.provider}/${t.model}`)?.band;
}

export function isAllowed(config: ResolvedConfig, tier: string, t: Target): boolean {
  const band = bandOf(config, t);
  return band !== undefined && tierOf(config, tier).bands.includes(band);
}

export function hasKey(config: ResolvedConfig, provider: string): boolean {
  const p = config.providers.get(provider);
  return p !== undefined && p.enabled && p.keys.length > 0;
}

export interface ResolvedModel {
  provider: ChatProvider;
  model: string;
  viaAlias: boolean;
  alias: string | null;
}

/**
 * The target an alias resolves to for a tier: the first allowed chat target whose provider
 * has a key, else the first allowed one (whose missing key is then reported), else none.
 * `keyModels`: only among the targets a key's allowlist allows (unless it lists the alias).
 */
export function aliasTarget(config: ResolvedConfig, tier: string, alias: string, keyModels?: Allowlist | null): Target | undefined {
  const keep = keyModels && !keyModels.names.has(alias) ? (t: Target) => allowsTarget(keyModels, t) : () => true;
  const allowed = (config.aliases.get(alias) ?? []).filter((t) => isChatProvider(t.provider) && isAllowed(config, tier, t) && keep(t));
  return allowed.find((t) => hasKey(config, t.provider)) ?? allowed[0];
}

/** Where the proxy reaches a provider (the provider's own paths follow). */
export const proxyPrefix = (provider: string) => `/api/external/${provider}/`;

/**
 * Why unified chat refuses a model id it cannot resolve (400 INVALID_REQUEST, `details.reason`):
 * `no_such_model` (in no provider's catalog), or `not_served_by_unified_chat` (a model of
 * another provider: reached through the proxy, when that provider has a key here,
 * `details.providerHasKey`).
 */
function unservedModel(config: ResolvedConfig, model: string): AgwError {
  const slash = model.indexOf('/');
  const other = [...config.models.values()].find(
    (m) => !isChatProvider(m.provider) && (m.model === model || (slash > 0 && m.provider === model.slice(0, slash) && m.model === model.slice(slash + 1))),
  );
  const served = CHAT_PROVIDERS.join(' and ');
  if (!other) {
    // a typo of an alias or of a catalog model id (bare or provider/model) is named
    const names = [...config.aliases.keys(), ...[...config.models.values()].flatMap((m) => [m.model, `${m.provider}/${m.model}`])];
    const near = didYouMean(model, names);
    return new AgwError(
      'INVALID_REQUEST',
      `unknown model ${model}: no such model in the catalog.${didYouMeanText(near)} Use an alias or a model id of ${CHAT_PROVIDERS.join(' or ')}: agw aliases lists them (GET /api/gateway/aliases)`,
      { field: 'model', reason: 'no_such_model', ...(near.length ? { suggestions: near } : {}) },
    );
  }
  const p = other.provider;
  const keyed = hasKey(config, p);
  const how = keyed
    ? `call it through the proxy: POST ${proxyPrefix(p)}<${p}'s own path>`
    : `it is reached through the proxy (${proxyPrefix(p)}…), but no API key is configured for ${p} on this service`;
  return new AgwError('INVALID_REQUEST', `model ${model} belongs to ${p}, which unified chat does not serve (it serves ${served} models): ${how}`, {
    field: 'model',
    reason: 'not_served_by_unified_chat',
    provider: p,
    providerHasKey: keyed,
    proxy: proxyPrefix(p),
  });
}

/**
 * Resolves the `model` of a unified chat body to a concrete (provider, model id). Accepts
 * an alias, a bare model id of either chat provider, or `provider/model`; `keyModels`
 * narrows it to a key's allowlist (an alias the key lists resolves as usual; another
 * alias only among its targets the key allows). Errors: 400 INVALID_REQUEST (a model
 * unified chat cannot serve, with the reason: see `unservedModel`), 403 MODEL_NOT_ALLOWED
 * (the tier's bands; `KeyModelRefusal` for the key's list), 503 ALPHA/BETA_KEY_MISSING
 * (`details.reason` `provider_without_key`).
 */
export function resolveChatModel(config: ResolvedConfig, tier: string, model: string, keyModels?: Allowlist | null): ResolvedModel {
  let target: Target | undefined;
  let viaAlias = false;
  if (config.aliases.has(model)) {
    viaAlias = true;
    target = aliasTarget(config, tier, model, keyModels);
    if (!target && keyModels && aliasTarget(config, tier, model)) {
      throw new KeyModelRefusal(`alias ${model} (every target it could use here)`, [...keyModels.names]);
    }
    if (!target) {
      throw new AgwError('MODEL_NOT_ALLOWED', `every target of alias ${model} is outside the ${tierOf(config, tier).displayName} tier's model bands`);
    }
  } else {
    const slash = model.indexOf('/');
    const candidates: Target[] =
      slash > 0 ? [{ provider: model.slice(0, slash), model: model.slice(slash + 1) }] : CHAT_PROVIDERS.map((provider) => ({ provider, model }));
    target = candidates.find((t) => isChatProvider(t.provider) && config.models.has(`${t.provider}/${t.model}`));
    if (!target) throw unservedModel(config, model);
    if (!isAllowed(config, tier, target)) {
      throw new AgwError('MODEL_NOT_ALLOWED', `model ${target.model} (band ${bandOf(config, target)}) is outside the ${tierOf(config, tier).displayName} tier's model bands`);
    }
    if (keyModels && !allowsTarget(keyModels, target)) throw new KeyModelRefusal(`model ${model}`, [...keyModels.names], target);
  }
  const provider = target.provider;
  if (!hasKey(config, provider)) {
    throw new AgwError(
      KEY_MISSING[provider] ?? 'PROVIDER_KEY_MISSING',
      `no API key is configured for ${provider}: set ${CREDENTIALS[provider] ?? `providers.${provider}.apiKey`} or AGW_PROVIDER_${provider.toUpperCase().replace(/-/g, '_')}_KEY`,
      { reason: 'provider_without_key', provider },
    );
  }
  return { provider, model: target.model, viaAlias, alias: viaAlias ? model : null };
}

/**
 * Entitlements `models`: one row per alias the tier can invoke, with the target it resolves
 * to (for a key with an allowlist: the aliases it may call, resolved as its calls are).
 */
export function entitledModels(config: ResolvedConfig, tier: string, keyModels?: Allowlist | null): { alias: string; provider: string; modelId: string }[] {
  const rows: { alias: string; provider: string; modelId: string }[] = [];
  for (const alias of config.aliases.keys()) {
    const t = aliasTarget(config, tier, alias, keyModels);
    if (t) rows.push({ alias, provider: t.provider, modelId: t.model });
  }
  return rows;
}
