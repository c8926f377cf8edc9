import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { allowlist, entryWithin, targetsOf, allowsTarget, type Allowlist } from '../gateway/model-allowlist.js';
import type { BudgetPeriod, KeyBounds, KeyLimits } from '../store/keys.js';

export type { KeyBounds } from '../store/keys.js';

export const UNBOUNDED: KeyBounds = { limits: null, expiresAt: null };

export type BoundField = 'budget' | 'budgetPeriod' | 'rpm' | 'tpm' | 'models' | 'expiresAt';

/**
 * Whether the budget periods of `outer` each lie inside one period of `inner`, so that
 * `inner`'s budget, spent in any way, is spent at most once in any `outer` period: a
 * UTC day lies in one week and in one month; a week may straddle two months.
 */
export function periodNests(outer: BudgetPeriod, inner: BudgetPeriod): boolean {
  return inner === outer || inner === 'total' || (outer === 'day' && (inner === 'week' || inner === 'month'));
}

const NO_LIMITS: KeyLimits = { budgetNano: null, budgetPeriod: 'total', rpm: null, tpm: null, models: null };

/** null when every limit is off (an unlimited key costs the gateway nothing extra). */
export function normalizeLimits(l: KeyLimits): KeyLimits | null {
  const none = l.budgetNano === null && l.rpm === null && l.tpm === null && l.models === null;
  return none ? null : { ...l, budgetPeriod: l.budgetNano === null ? 'total' : l.budgetPeriod };
}

/** The first limit of `child` that exceeds `parent`'s, or null when `child` fits inside. */
export function tooWide(config: ResolvedConfig, child: KeyBounds, parent: KeyBounds): BoundField | null {
  const p = parent.limits ?? NO_LIMITS;
  const c = child.limits ?? NO_LIMITS;
  if (p.budgetNano !== null) {
    if (c.budgetNano === null || c.budgetNano > p.budgetNano) return 'budget';
    if (!periodNests(p.budgetPeriod, c.budgetPeriod)) return 'budgetPeriod';
  }
  if (p.rpm !== null && (c.rpm === null || c.rpm > p.rpm)) return 'rpm';
  if (p.tpm !== null && (c.tpm === null || c.tpm > p.tpm)) return 'tpm';
  if (p.models !== null) {
    const a = allowlist(config, p.models);
    if (c.models === null || !c.models.every((e) => entryWithin(config, e, a))) return 'models';
  }
  if (parent.expiresAt !== null && (child.expiresAt === null || child.expiresAt > parent.expiresAt)) return 'expiresAt';
  return null;
}

const minOf = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** `child` narrowed until it fits inside `parent` (unchanged when it already does). */
export function clampTo(config: ResolvedConfig, child: KeyBounds, parent: KeyBounds): KeyBounds {
  if (tooWide(config, child, parent) === null) return child;
  const p = parent.limits ?? NO_LIMITS;
  const c = child.limits ?? NO_LIMITS;
  const out: KeyLimits = { ...c };
  if (p.budgetNano !== null) {
    out.budgetNano = minOf(c.budgetNano, p.budgetNano);
    if (c.budgetNano === null || !periodNests(p.budgetPeriod, c.budgetPeriod)) out.budgetPeriod = p.budgetPeriod;
  }
  out.rpm = minOf(c.rpm, p.rpm);
  out.tpm = minOf(c.tpm, p.tpm);
  if (p.models !== null) out.models = c.models === null ? p.models : narrowModels(config, c.models, allowlist(config, p.models));
  return { limits: normalizeLimits(out), expiresAt: minOf(child.expiresAt, parent.expiresAt) };
}

/**
 * The part of `list` that `parent` allows: entries within it stay; an alias or class that
 * is only partly within becomes its allowed targets (`provider/model`); the rest goes.
 */
function narrowModels(config: ResolvedConfig, list: readonly string[], parent: Allowlist): readonly string[] {
  const out: string[] = [];
  for (const e of list) {
    const keep = entryWithin(config, e, parent) ? [e] : (targetsOf(config, e) ?? []).filter((t) => allowsTarget(parent, t)).map((t) => `${t.provider}/${t.model}`);
    for (const k of keep) if (!out.includes(k)) out.push(k);
  }
  return Object.freeze(out);
}

/** A key authenticated with limits or an expiry may only make and manage keys within them. */
export function isBounded(b: KeyBounds): boolean {
  return b.limits !== null || b.expiresAt !== null;
}
