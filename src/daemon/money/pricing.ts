import type { ModelInfo, ResolvedConfig, ResolvedProvider } from '../../shared/config/resolve.js';
import { findUnitPrice, isSnapshotOf, type UnitPrice } from '../../shared/providers/index.js';
import { levelFor } from '../../shared/config/model-prices.js';
import { picoToNano, usdToNano } from '../../shared/money.js';
import type { TokenUsage } from '../gateway/usage.js';

/**
 * What one call costs, in nano-USD (CONTRACT third round, "Exact cost for every token
 * class"). Token-priced: the call's level is the model's base price or the tier its prompt
 * tokens are strictly above (all its tokens priced there), and
 *   raw = Σ tokens of each class × that class's price
 *       = uncached input × input + cache reads × cachedInput + 5-minute writes × cacheWrite
 *         + 1-hour writes × cacheWrite1h + output (reasoning included) × output,
 * summed in integer pico-USD and rounded to nano-USD once. Unit-priced: raw = usdToNano(units
 * x price). Customer cost = round(raw x provider margin).
 */
export interface Cost {
  model: string | null;
  promptTokens: number;
  completionTokens: number;
  /** the part of promptTokens billed at the cached rate */
  cachedTokens: number;
  /** the part of promptTokens written to the provider's prompt cache */
  cacheWriteTokens: number;
  /** the part of cacheWriteTokens written for 1 hour (the rest: 5 minutes) */
  cacheWrite1hTokens: number;
  /** the part of completionTokens spent thinking */
  reasoningTokens: number;
  /** the tier the call was priced at: its threshold, 0 for the base price */
  tierAbove: number;
  units: number;
  rawNano: number;
  customerNano: number;
}

const byProvider = new WeakMap<ResolvedConfig, Map<string, ModelInfo[]>>();

function modelsOf(config: ResolvedConfig, provider: string): ModelInfo[] {
  let m = byProvider.get(config);
  if (!m) {
    m = new Map();
    for (const info of config.models.values()) {
      const list = m.get(info.provider) ?? [];
      list.push(info);
      m.set(info.provider, list);
    }
    // longest ids first, so 'gpt-4o-mini-2024-07-18' matches gpt-4o-mini before gpt-4o
    for (const list of m.values()) list.sort((a, b) => b.model.length - a.model.length);
    byProvider.set(config, m);
  }
  return m.get(provider) ?? [];
}

/**
 * The price row for `model` at `provider`: exact id, else the longest catalog id of which the
 * model is a dated snapshot (gpt-4o-mini-2024-07-18; not o3-pro, which is not o3), else
 * undefined (charged at the provider's dearest row).
 */
export function priceRow(config: ResolvedConfig, provider: string, model: string | null | undefined): ModelInfo | undefined {
  if (!model) return undefined;
  const exact = config.models.get(`${provider}/${model}`);
  if (exact) return exact;
  return modelsOf(config, provider).find((m) => isSnapshotOf(model, m.model));
}

/** Unknown models are charged at the provider's most expensive catalog rate, its dearest level (never free). */
export function dearestRow(config: ResolvedConfig, provider: string): ModelInfo | undefined {
  let best: ModelInfo | undefined;
  let bestRate = -1;
  for (const m of modelsOf(config, provider)) {
    const top = m.levels[m.levels.length - 1];
    const rate = top.dearestInputPico + top.pico.output;
    if (rate > bestRate) [best, bestRate] = [m, rate];
  }
  return best;
}

export function tokenCost(config: ResolvedConfig, provider: ResolvedProvider, model: string | null, u: TokenUsage): Cost {
  const row = priceRow(config, provider.def.id, model) ?? dearestRow(config, provider.def.id);
  const cached = Math.min(u.cached, u.prompt);
  const write = Math.min(u.cacheWrite, u.prompt - cached);
  const write1h = Math.min(u.cacheWrite1h, write);
  let raw = 0;
  let tierAbove = 0;
  if (row) {
    const level = levelFor(row.levels, u.prompt);
    const p = level.pico;
    tierAbove = level.above;
    raw = picoToNano(
      (u.prompt - cached - write) * p.input + cached * p.cached + (write - write1h) * p.write + write1h * p.write1h + u.completion * p.output,
    );
  }
  return {
    model,
    promptTokens: u.prompt,
    completionTokens: u.completion,
    cachedTokens: cached,
    cacheWriteTokens: write,
    cacheWrite1hTokens: write1h,
    reasoningTokens: u.reasoning,
    tierAbove,
    units: 0,
    rawNano: raw,
    customerNano: Math.round(raw * provider.margin),
  };
}

/** How many units a call consumes (see UnitPrice.measure). */
export function measureUnits(unit: UnitPrice, body: unknown): number {
  const b = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  if (unit.measure === 'chars') {
    const v = unit.countField ? b[unit.countField] : undefined;
    return typeof v === 'string' ? v.length : 0;
  }
  if (unit.measure === 'field') {
    const v = unit.countField ? b[unit.countField] : undefined;
    return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 1;
  }
  return 1;
}

export interface UnitCharge {
  unit: UnitPrice;
  units: number;
}

export function unitCharge(provider: ResolvedProvider, path: string, body: unknown): UnitCharge | undefined {
  const unit = findUnitPrice(provider.def.id, path);
  return unit ? { unit, units: measureUnits(unit, body) } : undefined;
}

export function unitCost(provider: ResolvedProvider, charge: UnitCharge | undefined, model: string | null): Cost {
  const units = charge?.units ?? 0;
  const raw = charge ? usdToNano(units * charge.unit.price) : 0;
  return {
    model,
    promptTokens: 0,
    completionTokens: 0,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    cacheWrite1hTokens: 0,
    reasoningTokens: 0,
    tierAbove: 0,
    units,
    rawNano: raw,
    customerNano: Math.round(raw * provider.margin),
  };
}
