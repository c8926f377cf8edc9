import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/shared/config/load.js';
import { clampTo, periodNests, tooWide, type KeyBounds } from '../../src/daemon/keys/bounds.js';
import { allowlist, allowsModel, entryWithin } from '../../src/daemon/gateway/model-allowlist.js';
import type { BudgetPeriod, KeyLimits } from '../../src/daemon/money/key-limits.js';

/** "A key made with a key never gets more than that key has", limit by limit. */
const config = loadConfig(undefined, {});
const lim = (l: Partial<KeyLimits>): KeyBounds => ({
  limits: { budgetNano: null, budgetPeriod: 'total', rpm: null, tpm: null, models: null, ...l },
  expiresAt: null,
});

describe('budget periods', () => {
  it('a period nests in another when each of its periods lies in one of the other’s', () => {
    const P: BudgetPeriod[] = ['day', 'week', 'month', 'total'];
    const ok = P.flatMap((outer) => P.filter((inner) => periodNests(outer, inner)).map((inner) => `${outer}->${inner}`));
    expect(ok.sort()).toEqual(['day->day', 'day->month', 'day->total', 'day->week', 'month->month', 'month->total', 'total->total', 'week->total', 'week->week'].sort());
  });
});

describe('tooWide', () => {
  const parent = { ...lim({ budgetNano: 5e9, budgetPeriod: 'day', rpm: 60, tpm: 1000, models: ['smart-lite'] }), expiresAt: 2_000 };
  it.each([
    [{ ...lim({ budgetNano: 5e9, budgetPeriod: 'week', rpm: 60, tpm: 1000, models: ['smart-lite'] }), expiresAt: 2_000 }, null],
    [{ ...lim({ budgetNano: 5e9 + 1, budgetPeriod: 'day', rpm: 60, tpm: 1000, models: ['smart-lite'] }), expiresAt: 2_000 }, 'budget'],
    [{ ...lim({ budgetNano: 1, budgetPeriod: 'day', rpm: null, tpm: 1000, models: ['smart-lite'] }), expiresAt: 2_000 }, 'rpm'],
    [{ ...lim({ budgetNano: 1, budgetPeriod: 'day', rpm: 1, tpm: 1001, models: ['smart-lite'] }), expiresAt: 2_000 }, 'tpm'],
    [{ ...lim({ budgetNano: 1, budgetPeriod: 'day', rpm: 1, tpm: 1, models: ['openai/gpt-4o-mini', 'smart-standard'] }), expiresAt: 2_000 }, 'models'],
    [{ ...lim({ budgetNano: 1, budgetPeriod: 'day', rpm: 1, tpm: 1, models: ['anthropic/claude-3-5-haiku-latest'] }), expiresAt: 2_001 }, 'expiresAt'],
    [{ ...lim({ budgetNano: 1, budgetPeriod: 'day', rpm: 1, tpm: 1, models: ['smart-lite'] }), expiresAt: null }, 'expiresAt'],
  ])('%j → %s', (child, field) => expect(tooWide(config, child as KeyBounds, parent)).toBe(field));

  it('a monthly budget under a weekly one could be spent twice in a week: too wide', () => {
    expect(tooWide(config, lim({ budgetNano: 1, budgetPeriod: 'month' }), lim({ budgetNano: 5, budgetPeriod: 'week' }))).toBe('budgetPeriod');
  });
});

describe('clampTo', () => {
  it('narrows every limit to the parent’s and leaves a key that fits untouched', () => {
    const parent = { ...lim({ budgetNano: 3, budgetPeriod: 'week', rpm: 10, models: ['gpt-4o-mini'] }), expiresAt: 500 };
    const child = { ...lim({ budgetNano: 9, budgetPeriod: 'day', rpm: 20, tpm: 7, models: ['smart-lite', 'gpt-4o-mini', 'o3'] }), expiresAt: null };
    const c = clampTo(config, child, parent);
    expect(c).toEqual({ limits: { budgetNano: 3, budgetPeriod: 'week', rpm: 10, tpm: 7, models: ['openai/gpt-4o-mini', 'gpt-4o-mini'] }, expiresAt: 500 });
    expect(tooWide(config, c, parent)).toBeNull();
    expect(clampTo(config, c, parent)).toBe(c);
  });
});

describe('allowlists', () => {
  it('an alias allows itself and its targets by id; a bare id any provider’s model of that name', () => {
    const list = Object.freeze(['smart-lite', 'o3']);
    const a = allowlist(config, list);
    expect(allowlist(config, list)).toBe(a); // one expansion per key's list
    expect(allowsModel(a, 'openai', 'gpt-4o-mini')).toBe(true);
    expect(allowsModel(a, 'anthropic', 'claude-3-5-haiku-latest')).toBe(true);
    expect(allowsModel(a, 'openai', 'gpt-4o')).toBe(false);
    expect(allowsModel(a, 'together', 'o3')).toBe(true);
    expect(entryWithin(config, 'smart-lite', allowlist(config, ['openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku-latest']))).toBe(true);
    expect(entryWithin(config, 'gpt-4o-mini', allowlist(config, ['smart-lite']))).toBe(false);
  });
});
