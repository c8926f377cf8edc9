import { picoPerToken } from '../money.js';
import type { PriceTier, TokenPrices } from '../providers/index.js';

/**
 * One level of a model's prices with every class resolved (a class the model or tier does
 * not price is its input price): the base level (`above` 0) or a tier (`above` its
 * threshold: calls whose prompt tokens are strictly above it are priced here, all tokens).
 * `pico` holds the same prices as integer pico-USD (1e-12) per token, the form the money
 * path multiplies by (money/pricing.ts); worked out once per config, never per call.
 */
export interface PriceLevel {
  above: number;
  inputPer1M: number;
  outputPer1M: number;
  cachedInputPer1M: number;
  cacheWritePer1M: number;
  cacheWrite1hPer1M: number;
  pico: { input: number; cached: number; write: number; write1h: number; output: number };
  /** the dearest input-side class of this level, pico per token (what a hold prices the prompt at) */
  dearestInputPico: number;
}

function level(above: number, p: Partial<TokenPrices> & Pick<TokenPrices, 'inputPer1M' | 'outputPer1M'>): PriceLevel {
  const cachedInputPer1M = p.cachedInputPer1M ?? p.inputPer1M;
  const cacheWritePer1M = p.cacheWritePer1M ?? p.inputPer1M;
  const cacheWrite1hPer1M = p.cacheWrite1hPer1M ?? p.inputPer1M;
  const pico = {
    input: picoPerToken(p.inputPer1M),
    cached: picoPerToken(cachedInputPer1M),
    write: picoPerToken(cacheWritePer1M),
    write1h: picoPerToken(cacheWrite1hPer1M),
    output: picoPerToken(p.outputPer1M),
  };
  return {
    above,
    inputPer1M: p.inputPer1M,
    outputPer1M: p.outputPer1M,
    cachedInputPer1M,
    cacheWritePer1M,
    cacheWrite1hPer1M,
    pico,
    dearestInputPico: Math.max(pico.input, pico.cached, pico.write, pico.write1h),
  };
}

/** The levels of a model's price: base first, then its tiers by ascending threshold. */
export function priceLevels(base: TokenPrices, tiers: readonly PriceTier[] = []): PriceLevel[] {
  return [level(0, base), ...[...tiers].sort((a, b) => a.aboveInputTokens - b.aboveInputTokens).map((t) => level(t.aboveInputTokens, t))];
}

/** The level a call with `prompt` input-side tokens is priced at: the last whose threshold it is strictly above. */
export function levelFor(levels: readonly PriceLevel[], prompt: number): PriceLevel {
  let at = levels[0];
  for (let i = 1; i < levels.length; i++) if (prompt > levels[i].above) at = levels[i];
  return at;
}
