import { AgwError } from '../../shared/errors.js';
import { usdToNano } from '../../shared/money.js';
import { BUDGET_PERIODS, KEY_LIMIT_BOUNDS, type KeyLimitsInputT } from '../../shared/schemas/keys.js';
import type { BudgetPeriod, KeyLimits } from '../money/key-limits.js';
import { normalizeLimits, type KeyBounds } from './bounds.js';

/**
 * A request's `limits` (POST/PATCH /api/keys, `agw admin key create/update`) applied to
 * a key's current bounds: a field left out keeps its value, `null` lifts that limit.
 * Checked here as well as by the HTTP schema, so the admin commands get the same rules
 * and the same messages: 400 INVALID_REQUEST naming the field.
 */
const { budgetUsd: MAX_BUDGET_USD, rpm: MAX_RPM, tpm: MAX_TPM, models: MAX_MODELS, modelEntry: MODEL_ENTRY_RE } = KEY_LIMIT_BOUNDS;
const PERIODS: readonly BudgetPeriod[] = BUDGET_PERIODS;

function bad(field: string, message: string): AgwError {
  return new AgwError('INVALID_REQUEST', `limits.${field} ${message}`, { field: `limits.${field}`, location: 'body' });
}

function count(field: string, v: unknown, max: number): number | null {
  if (v === null) return null;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max) throw bad(field, `must be a whole number from 1 to ${max}, or null for no limit`);
  return v;
}

function models(v: unknown): readonly string[] | null {
  if (v === null) return null;
  if (!Array.isArray(v) || v.length === 0 || v.length > MAX_MODELS) {
    throw bad('models', `must list 1 to ${MAX_MODELS} model ids or aliases, or be null for any model`);
  }
  const out: string[] = [];
  for (const e of v) {
    const s = typeof e === 'string' ? e.trim() : '';
    if (!MODEL_ENTRY_RE.test(s)) throw bad('models', `has an entry that is not a model id or alias: ${JSON.stringify(e).slice(0, 80)}`);
    if (!out.includes(s)) out.push(s);
  }
  return Object.freeze(out);
}

/** An ISO date-time in the future (epoch ms), or null. */
export function expiryOf(v: unknown, now: number, field = 'limits.expiresAt'): number | null {
  if (v === null) return null;
  const ms = typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? Date.parse(v) : NaN;
  const f = field.replace(/^limits\./, '');
  if (!Number.isFinite(ms)) throw bad(f, 'must be an ISO 8601 date-time such as 2030-01-31T00:00:00Z, or null for never');
  if (ms <= now) throw bad(f, `must be in the future (it is ${new Date(now).toISOString()} now)`);
  return ms;
}

/** `base` with the given limits applied. */
export function applyLimits(base: KeyBounds, input: KeyLimitsInputT | undefined, now = Date.now()): KeyBounds {
  if (!input) return base;
  const cur: KeyLimits = base.limits ? { ...base.limits } : { budgetNano: null, budgetPeriod: 'total', rpm: null, tpm: null, models: null };
  const hadBudget = cur.budgetNano !== null;
  if (input.budget !== undefined) {
    const b = input.budget;
    if (b !== null && (typeof b !== 'number' || !Number.isFinite(b) || b < 0 || b > MAX_BUDGET_USD)) {
      throw bad('budget', `must be a number of USD from 0 to ${MAX_BUDGET_USD}, or null for no budget`);
    }
    cur.budgetNano = b === null ? null : usdToNano(b);
  }
  if (input.budgetPeriod !== undefined && input.budgetPeriod !== null) {
    if (!PERIODS.includes(input.budgetPeriod)) throw bad('budgetPeriod', `must be one of ${PERIODS.join(', ')}`);
    if (cur.budgetNano === null) throw bad('budgetPeriod', 'needs a budget: set limits.budget too');
    cur.budgetPeriod = input.budgetPeriod;
  } else if (!hadBudget && cur.budgetNano !== null) {
    cur.budgetPeriod = 'total'; // a new budget without a period never resets
  }
  if (input.rpm !== undefined) cur.rpm = count('rpm', input.rpm, MAX_RPM);
  if (input.tpm !== undefined) cur.tpm = count('tpm', input.tpm, MAX_TPM);
  if (input.models !== undefined) cur.models = models(input.models);
  const expiresAt = input.expiresAt !== undefined ? expiryOf(input.expiresAt, now) : base.expiresAt;
  return { limits: normalizeLimits(cur), expiresAt };
}
