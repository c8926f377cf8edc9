import type { Command } from 'commander';
import { BUDGET_PERIODS, KEY_LIMIT_BOUNDS } from '../shared/schemas/key-bounds.js';
import type { KeyLimitsInputT } from '../shared/schemas/keys.js';
import { UsageError } from './errors.js';

/**
 * The limit flags of `agw admin key create|update` and `agw keys create|update`, read into
 * the API's `limits` object. `none` lifts a limit (`--expires never`); a flag left out
 * leaves it as it is (create: no limit, or inherited from a limited key).
 */
export interface KeyFlagOpts {
  name?: string;
  budget?: string;
  budgetPeriod?: string;
  rpm?: string;
  tpm?: string;
  models?: string;
  expires?: string;
}

export function addKeyFlags(cmd: Command): Command {
  return cmd
    .option('--name <name>', 'label')
    .option('--budget <usd>', 'USD the key may spend per budget period (none: no budget)')
    .option('--budget-period <period>', 'day, week, month or total (default total: never resets)')
    .option('--rpm <n>', 'requests per minute (none: no limit)')
    .option('--tpm <n>', 'tokens per minute (none: no limit)')
    .option('--models <list>', 'comma-separated model ids, provider/model, aliases or smart-route classes (none: any)')
    .option('--expires <when>', '30d, 12h, 2w, a date (2030-01-31, its 00:00 UTC) or a date-time; never: no expiry');
}

const NONE = new Set(['none', 'null', 'unlimited']);
const PERIODS: readonly string[] = BUDGET_PERIODS;

function count(flag: string, v: string, max: number): number | null {
  if (NONE.has(v)) return null;
  if (!/^[1-9][0-9]*$/.test(v) || Number(v) > max) throw new UsageError(`${flag} must be a whole number from 1 to ${max.toLocaleString('en-US')}, or none; got ${v}`);
  return Number(v);
}

/** `--expires`: a duration from now, a date, a date-time, or never (null). */
function parseExpires(v: string, now = Date.now()): string | null {
  if (v === 'never' || NONE.has(v)) return null;
  const rel = /^([1-9][0-9]{0,4})([hdw])$/.exec(v);
  if (rel) return new Date(now + Number(rel[1]) * { h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[rel[2] as 'h' | 'd' | 'w']).toISOString();
  const ms = /^\d{4}-\d\d-\d\d$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : /^\d{4}-\d\d-\d\dT/.test(v) ? Date.parse(v) : NaN;
  if (!Number.isFinite(ms)) throw new UsageError(`--expires must look like 30d, 12h, 2w, 2030-01-31 or 2030-01-31T12:00:00Z (or never); got ${v}`);
  if (ms <= now) throw new UsageError(`--expires ${v} is in the past`);
  return new Date(ms).toISOString();
}

/** The flags as `limits` (undefined when none was given). */
export function limitsFromFlags(o: KeyFlagOpts, now = Date.now()): KeyLimitsInputT | undefined {
  const l: KeyLimitsInputT = {};
  if (o.budget !== undefined) {
    const n = NONE.has(o.budget) ? null : Number(o.budget);
    if (n !== null && (!/^\d+(\.\d+)?$/.test(o.budget) || !(n <= KEY_LIMIT_BOUNDS.budgetUsd))) {
      throw new UsageError(`--budget must be a number of USD such as 5 or 12.50 (at most ${KEY_LIMIT_BOUNDS.budgetUsd.toLocaleString('en-US')}), or none; got ${o.budget}`);
    }
    l.budget = n;
  }
  if (o.budgetPeriod !== undefined) {
    if (!PERIODS.includes(o.budgetPeriod)) throw new UsageError(`--budget-period must be one of ${PERIODS.join(', ')}; got ${o.budgetPeriod}`);
    l.budgetPeriod = o.budgetPeriod as KeyLimitsInputT['budgetPeriod'];
  }
  if (o.rpm !== undefined) l.rpm = count('--rpm', o.rpm, KEY_LIMIT_BOUNDS.rpm);
  if (o.tpm !== undefined) l.tpm = count('--tpm', o.tpm, KEY_LIMIT_BOUNDS.tpm);
  if (o.models !== undefined) {
    const list = o.models.split(',').map((m) => m.trim()).filter(Boolean);
    if (!list.length) throw new UsageError('--models needs at least one model id or alias (or none for any model)');
    const none = list.length === 1 && NONE.has(list[0]);
    const odd = list.find((m) => !KEY_LIMIT_BOUNDS.modelEntry.test(m));
    if (!none && odd !== undefined) throw new UsageError(`--models: ${JSON.stringify(odd.slice(0, 80))} is not a model id, provider/model or alias`);
    if (list.length > KEY_LIMIT_BOUNDS.models) throw new UsageError(`--models lists at most ${KEY_LIMIT_BOUNDS.models} entries; got ${list.length}`);
    l.models = none ? null : list;
  }
  if (o.expires !== undefined) l.expiresAt = parseExpires(o.expires, now);
  return Object.keys(l).length ? l : undefined;
}

/** The flag a `limits.X` field is set with, for messages. */
export function flagOf(field: unknown): string | undefined {
  const f = typeof field === 'string' ? field.replace(/^limits\./, '') : '';
  const flags: Record<string, string> = { budget: '--budget', budgetPeriod: '--budget-period', rpm: '--rpm', tpm: '--tpm', models: '--models', expiresAt: '--expires', name: '--name' };
  return flags[f];
}

/** A server's refusal of a `limits.X` field, said with the flag that set it (a usage error). */
export function flagError(message: string, field: unknown): UsageError {
  const flag = flagOf(field);
  return new UsageError(flag ? `${flag}: ${message.replace(/^limits\.\S+ /, '')}` : message);
}
