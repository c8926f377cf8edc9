import { SMART_ROUTE_CLASSES, type SmartRouteClass, type Target } from '../../shared/config/defaults.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { AgwError } from '../../shared/errors.js';

/**
 * A key's model allowlist (`limits.models`, CONTRACT "Keys with limits"). Each entry is
 *   - a model id (`gpt-4o-mini`): that model at any provider;
 *   - `provider/model`: that model at that provider;
 *   - an alias (`smart-lite`): the alias itself on unified chat, and every one of its
 *     targets wherever a concrete model is called (proxy, smart route, chat);
 *   - a smart-route class (`best-cheap-llm`): the class on the smart route, and its targets.
 * Entries match exactly (case included). The expanded set is computed once per list
 * (the key principal, and so its list, is shared by every call of the key).
 */
export interface Allowlist {
  /** the entries as listed */
  readonly names: ReadonlySet<string>;
  /** bare model ids and `provider/model` strings, aliases and classes expanded */
  readonly models: ReadonlySet<string>;
}

const cache = new WeakMap<ResolvedConfig, WeakMap<readonly string[], Allowlist>>();

/** The targets of an alias or smart-route class (undefined for anything else). */
export function targetsOf(config: ResolvedConfig, entry: string): readonly Target[] | undefined {
  if (config.aliases.has(entry)) return config.aliases.get(entry);
  if ((SMART_ROUTE_CLASSES as readonly string[]).includes(entry)) return config.smartRoutes[entry as SmartRouteClass];
  return undefined;
}

export function allowlist(config: ResolvedConfig, list: readonly string[]): Allowlist {
  let perConfig = cache.get(config);
  if (!perConfig) cache.set(config, (perConfig = new WeakMap()));
  const hit = perConfig.get(list);
  if (hit) return hit;
  const models = new Set<string>();
  for (const e of list) {
    const targets = targetsOf(config, e);
    if (targets) for (const t of targets) models.add(`${t.provider}/${t.model}`);
    else models.add(e);
  }
  const a: Allowlist = { names: new Set(list), models };
  perConfig.set(list, a);
  return a;
}

/** Whether the list lets a key call `model` at `provider`. */
export function allowsModel(a: Allowlist, provider: string, model: string): boolean {
  return a.models.has(model) || a.models.has(`${provider}/${model}`);
}

export function allowsTarget(a: Allowlist, t: Target): boolean {
  return allowsModel(a, t.provider, t.model);
}

/**
 * Whether every call `entry` allows is allowed by `parent` too (a key made with a key:
 * its list must be within its maker's). An entry listed by the parent is; otherwise an
 * alias or class whose every target the parent allows, a `provider/model` the parent
 * allows, or a bare id the parent lists bare.
 */
export function entryWithin(config: ResolvedConfig, entry: string, parent: Allowlist): boolean {
  if (parent.names.has(entry) || parent.models.has(entry)) return true;
  const targets = targetsOf(config, entry);
  if (targets) return targets.length > 0 && targets.every((t) => allowsTarget(parent, t));
  const slash = entry.indexOf('/');
  return slash > 0 && allowsModel(parent, entry.slice(0, slash), entry.slice(slash + 1));
}

/** A 403 MODEL_NOT_ALLOWED caused by the key's allowlist (the route records it with `refuse`). */
export class KeyModelRefusal extends AgwError {
  constructor(
    what: string,
    list: readonly string[],
    /** the concrete model refused, when there is one */
    readonly target?: Target,
  ) {
    super('MODEL_NOT_ALLOWED', `${what} is not allowed for this key: it may call ${list.join(', ')}`, { allowedModels: [...list] });
  }
}
