/**
 * Limits a key may carry (CONTRACT "Keys with limits"): a budget in USD per period, a
 * requests-per-minute and a tokens-per-minute rate, the models it may call, an expiry.
 * null = no such limit. Budgets and rates are enforced by the money engine's admission
 * (holds count against the budget; rates are token buckets), exactly across daemons.
 */
export type { BudgetPeriod, KeyLimits } from '../store/keys.js';
import type { BudgetPeriod } from '../store/keys.js';

/**
 * The key of the budget period `now` falls in (UTC), as stored in key_spend.period:
 * 'D2026-11-24', 'W2026-11-23' (the Monday the ISO week starts on), 'M2026-11', 'total'.
 */
export function budgetPeriodKey(period: BudgetPeriod, now: number): string {
  const d = new Date(now);
  switch (period) {
    case 'day':
      return `D${d.toISOString().slice(0, 10)}`;
    case 'week': {
      const monday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
      return `W${new Date(monday).toISOString().slice(0, 10)}`;
    }
    case 'month':
      return `M${d.toISOString().slice(0, 7)}`;
    case 'total':
      return 'total';
  }
}

/** When the budget period that `now` falls in ends (epoch ms; null for 'total'). */
export function budgetPeriodEnd(period: BudgetPeriod, now: number): number | null {
  const d = new Date(now);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const day = d.getUTCDate();
  switch (period) {
    case 'day':
      return Date.UTC(y, m, day + 1);
    case 'week':
      return Date.UTC(y, m, day - ((d.getUTCDay() + 6) % 7) + 7);
    case 'month':
      return Date.UTC(y, m + 1, 1);
    case 'total':
      return null;
  }
}
