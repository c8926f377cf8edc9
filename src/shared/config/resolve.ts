import {
  DEFAULT_CONTEXT_TOKENS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  PROVIDERS,
  getProvider,
  type ModelBand,
  type PriceTier,
  type ProviderDef,
  type TokenPrices,
  USAGE_TYPES,
} from '../providers/index.js';
import { priceLevels, type PriceLevel } from './model-prices.js';
import type { ConfigFile } from './schema.js';
import {
  DEFAULT_ALIASES,
  DEFAULT_CATEGORIES,
  DEFAULT_GATEWAY,
  DEFAULT_LOGS,
  DEFAULT_MARGIN,
  DEFAULT_PLATFORM_FEE,
  DEFAULT_SMART_ROUTES,
  DEFAULT_TIERS,
  DEFAULT_UPLOADS,
  DEFAULT_WALLET,
  SMART_ROUTE_CLASSES,
  type SmartRouteClass,
  type Target,
  type TierDef,
} from './defaults.js';
import type { ConfigProblem } from './load.js';
import { resolveKeys, keySecrets, type ProviderKey } from './provider-keys.js';
import { cloudModelRow, resolveCloud } from './cloud.js';
import type { CloudSettings } from '../providers/types.js';

export interface ResolvedProvider {
  def: ProviderDef;
  baseUrl: string;
  /** the first key's API key (API-key providers; kept for callers that only need one) */
  apiKey?: string;
  /** every key, the default one first (CONTRACT "Several keys per provider"); empty: no key */
  keys: ProviderKey[];
  /** cloud providers' settings (deployments, apiVersion, region, project, location) */
  cloud: CloudSettings;
  /** The effective margin: retail = raw x margin. */
  margin: number;
  enabled: boolean;
}

/**
 * A model's price as declared (catalog row, then the config's `models:` entry over it) and
 * resolved: `levels` has every class of the base price and of each tier, fallbacks applied,
 * as USD and as integer pico-USD per token (model-prices.ts).
 */
export interface ModelInfo extends TokenPrices {
  provider: string;
  model: string;
  band: ModelBand;
  tiers: readonly PriceTier[];
  /** the model's own output limit: a call's output cap is at most this */
  maxOutputTokens: number;
  /** the model's context window: what context held at the provider is held at */
  contextTokens: number;
  /** base level first, then the tiers by ascending threshold */
  levels: readonly PriceLevel[];
}

export interface ResolvedConfig {
  publicUrl?: string;
  /** Fastify's trustProxy: which X-Forwarded-For hops to believe (login throttling per address). */
  trustProxy: boolean | number | string;
  store: string;
  margin: number;
  logLevel: string;
  masterToken?: string;
  providers: Map<string, ResolvedProvider>;
  /** Keyed `provider/model`. */
  models: Map<string, ModelInfo>;
  tiers: Map<string, TierDef>;
  aliases: Map<string, Target[]>;
  smartRoutes: Record<SmartRouteClass, Target[]>;
  marketplace: { platformFee: number; categories: string[] } & typeof DEFAULT_UPLOADS;
  /** `selfTopup`: POST /api/wallet/topup credits directly (else 403 TOPUP_DISABLED). */
  wallet: { selfTopup: boolean };
  gateway: typeof DEFAULT_GATEWAY;
  logs: typeof DEFAULT_LOGS;
  /** OpenTelemetry export (absent: off, nothing of it loaded) */
  telemetry?: { otlpEndpoint: string; headers: Record<string, string>; serviceName: string };
}

/** Every provider secret of a config (each key's API key, AWS keys, service account key): what is redacted. */
export function providerSecrets(config: Pick<ResolvedConfig, 'providers'>): string[] {
  return [...config.providers.values()].flatMap((p) => p.keys.flatMap(keySecrets));
}

/** True when the provider has at least one key and is enabled. */
export function hasKeys(p: ResolvedProvider | undefined): boolean {
  return p !== undefined && p.enabled && p.keys.length > 0;
}

export const modelKey = (provider: string, model: string): string => `${provider}/${model}`;

function envKeyName(id: string, suffix: string): string {
  return `AGW_PROVIDER_${id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_${suffix}`;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const HTTP_URL = /^https?:\/\/[^\s/]+(:\d+)?(\/\S*)?$/;

/** The environment overrides get the same checks as the keys they override. */
function checkEnv(env: NodeJS.ProcessEnv): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const bad = (name: string, rule: string, message: string) => problems.push({ path: `env.${name}`, rule, message });
  if (env.AGW_LOG_LEVEL && !LOG_LEVELS.includes(env.AGW_LOG_LEVEL)) bad('AGW_LOG_LEVEL', 'enum', `must be one of ${LOG_LEVELS.join(', ')}`);
  if (env.AGW_PUBLIC_URL && !HTTP_URL.test(env.AGW_PUBLIC_URL)) bad('AGW_PUBLIC_URL', 'pattern', 'must be an http(s) URL');
  if (env.AGW_MASTER_TOKEN !== undefined && env.AGW_MASTER_TOKEN !== '' && env.AGW_MASTER_TOKEN.length < 16)
    bad('AGW_MASTER_TOKEN', 'minLength', 'must be at least 16 characters');
  for (const def of Object.values(PROVIDERS) as ProviderDef[]) {
    const name = envKeyName(def.id, 'BASE_URL');
    if (env[name] && !HTTP_URL.test(env[name]!)) bad(name, 'pattern', 'must be an http(s) URL');
  }
  return problems;
}

/** Merges a validated config file over the built-in defaults and the environment. */
export function resolveConfig(
  file: ConfigFile,
  env: NodeJS.ProcessEnv,
): { config: ResolvedConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = checkEnv(env);
  const margin = file.margin ?? DEFAULT_MARGIN;

  for (const id of Object.keys(file.providers ?? {})) {
    if (!getProvider(id)) problems.push({ path: `providers.${id}`, rule: 'provider', message: 'unknown provider id' });
  }
  const providers = new Map<string, ResolvedProvider>();
  for (const def of Object.values(PROVIDERS) as ProviderDef[]) {
    const o = file.providers?.[def.id] ?? {};
    const keys = resolveKeys(def, o, o.keys, env[envKeyName(def.id, 'KEY')] || undefined, problems);
    const cloud = resolveCloud(def, o, keys, problems, env[envKeyName(def.id, 'BASE_URL')]);
    providers.set(def.id, {
      def,
      baseUrl: (env[envKeyName(def.id, 'BASE_URL')] ?? o.baseUrl ?? cloud.baseUrl ?? def.baseUrl).replace(/\/+$/, ''),
      apiKey: keys[0]?.apiKey,
      keys,
      cloud: cloud.settings,
      margin: o.margin ?? margin,
      enabled: o.enabled ?? true,
    });
  }

  const models = new Map<string, ModelInfo>();
  for (const def of Object.values(PROVIDERS) as ProviderDef[]) {
    if (def.pricing.kind !== 'llm') continue;
    for (const m of def.pricing.models) models.set(modelKey(def.id, m.model), withLevels({ provider: def.id, ...m, tiers: m.tiers ?? [] }));
  }
  (file.models ?? []).forEach((m, i) => {
    const def = getProvider(m.provider);
    if (!def) return problems.push({ path: `models.${i}.provider`, rule: 'provider', message: 'unknown provider id' });
    const prev = models.get(modelKey(m.provider, m.model)) ?? cloudModelRow(def, m.model, models.values());
    if (!prev && (m.inputPer1M === undefined || m.outputPer1M === undefined || !m.band)) {
      return problems.push({
        path: `models.${i}`,
        rule: 'required',
        message: 'a new model needs band, inputPer1M and outputPer1M',
      });
    }
    const above = (m.tiers ?? []).map((t) => t.aboveInputTokens);
    if (new Set(above).size !== above.length)
      problems.push({ path: `models.${i}.tiers`, rule: 'unique', message: 'two tiers have the same aboveInputTokens' });
    const input = m.inputPer1M ?? prev!.inputPer1M;
    models.set(
      modelKey(m.provider, m.model),
      withLevels({
        provider: m.provider,
        model: m.model,
        band: m.band ?? prev!.band,
        inputPer1M: input,
        outputPer1M: m.outputPer1M ?? prev!.outputPer1M,
        cachedInputPer1M: m.cachedInputPer1M ?? prev?.cachedInputPer1M ?? input,
        // a class the catalog did not price follows the (new) input price
        cacheWritePer1M: m.cacheWritePer1M ?? prev?.cacheWritePer1M,
        cacheWrite1hPer1M: m.cacheWrite1hPer1M ?? prev?.cacheWrite1hPer1M,
        tiers: m.tiers ?? prev?.tiers ?? [],
        maxOutputTokens: m.maxOutputTokens ?? prev?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
        contextTokens: m.contextTokens ?? prev?.contextTokens ?? DEFAULT_CONTEXT_TOKENS,
      }),
    );
  });

  const tiers = new Map<string, TierDef>();
  const tierIds = new Set([...Object.keys(DEFAULT_TIERS), ...Object.keys(file.tiers ?? {})]);
  for (const id of tierIds) {
    const base = DEFAULT_TIERS[id];
    const o = file.tiers?.[id] ?? {};
    const quotas = { ...(base?.quotas ?? Object.fromEntries(USAGE_TYPES.map((t) => [t, 0]))), ...(o.quotas ?? {}) };
    tiers.set(id, {
      id,
      displayName: o.displayName ?? base?.displayName ?? id,
      bands: o.bands ?? base?.bands ?? ['lite'],
      capabilities: o.capabilities ?? base?.capabilities ?? ['chat'],
      monthlyAllowance: o.monthlyAllowance ?? base?.monthlyAllowance ?? 0,
      quotas: quotas as TierDef['quotas'],
    });
  }

  const checkTargets = (path: string, targets: Target[]) =>
    targets.forEach((t, i) => {
      const key = modelKey(t.provider, t.model);
      if (models.has(key)) return;
      // a cloud's own model id, priced as its catalog row
      const def = getProvider(t.provider);
      const row = def && cloudModelRow(def, t.model, models.values());
      if (row) models.set(key, { ...row, model: t.model });
      else problems.push({ path: `${path}.${i}`, rule: 'model', message: `unknown model ${t.provider}/${t.model}` });
    });
  const aliases = new Map<string, Target[]>(Object.entries(DEFAULT_ALIASES));
  for (const [alias, targets] of Object.entries(file.aliases ?? {})) {
    checkTargets(`aliases.${alias}`, targets);
    aliases.set(alias, targets);
  }
  const smartRoutes = { ...DEFAULT_SMART_ROUTES };
  for (const cls of SMART_ROUTE_CLASSES) {
    const targets = file.smartRoutes?.[cls];
    if (!targets) continue;
    checkTargets(`smartRoutes.${cls}`, targets);
    smartRoutes[cls] = targets;
  }

  const store = env.AGW_STORE || file.store || 'sqlite';
  if (store !== 'sqlite' && store !== ':memory:' && !/^postgres(ql)?:\/\//.test(store))
    problems.push({ path: 'store', rule: 'store', message: 'must be sqlite or a postgres:// URL' });

  const masterToken = env.AGW_MASTER_TOKEN || file.auth?.masterToken;
  return {
    problems,
    config: {
      publicUrl: (env.AGW_PUBLIC_URL || file.publicUrl)?.replace(/\/+$/, ''),
      trustProxy: file.trustProxy ?? false,
      store,
      margin,
      logLevel: env.AGW_LOG_LEVEL || file.logLevel || 'info',
      masterToken,
      providers,
      models,
      tiers,
      aliases,
      smartRoutes,
      marketplace: {
        platformFee: file.marketplace?.platformFee ?? DEFAULT_PLATFORM_FEE,
        categories: file.marketplace?.categories ?? DEFAULT_CATEGORIES,
        uploadIdleTimeoutMs: file.marketplace?.uploadIdleTimeoutMs ?? DEFAULT_UPLOADS.uploadIdleTimeoutMs,
        uploadTimeoutMs: file.marketplace?.uploadTimeoutMs ?? DEFAULT_UPLOADS.uploadTimeoutMs,
        maxConcurrentUploads: file.marketplace?.maxConcurrentUploads ?? DEFAULT_UPLOADS.maxConcurrentUploads,
      },
      wallet: { selfTopup: file.wallet?.selfTopup ?? DEFAULT_WALLET.selfTopup },
      gateway: { ...DEFAULT_GATEWAY, ...(file.gateway ?? {}) },
      logs: resolveLogs(file.logs),
      telemetry: file.telemetry?.otlpEndpoint
        ? { otlpEndpoint: file.telemetry.otlpEndpoint, headers: file.telemetry.headers ?? {}, serviceName: file.telemetry.serviceName ?? 'agw' }
        : undefined,
    },
  };
}

/** A model's declared price with its resolved levels (base, then tiers ascending). */
function withLevels(m: Omit<ModelInfo, 'levels'>): ModelInfo {
  const tiers = [...m.tiers].sort((a, b) => a.aboveInputTokens - b.aboveInputTokens);
  return { ...m, tiers, levels: priceLevels(m, tiers) };
}

/** logs.*: bodies are never kept longer than their records. */
function resolveLogs(l: ConfigFile['logs']): typeof DEFAULT_LOGS {
  const retentionDays = l?.retentionDays ?? DEFAULT_LOGS.retentionDays;
  return {
    retentionDays,
    bodies: l?.bodies ?? DEFAULT_LOGS.bodies,
    bodiesRetentionDays: Math.min(retentionDays, l?.bodiesRetentionDays ?? retentionDays),
  };
}
