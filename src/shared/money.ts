/**
 * Money is kept as integer nano-dollars (1e-9 USD) in the store so that sums are exact
 * and per-token prices (fractions of a micro-dollar) do not round to zero.
 * The API speaks USD numbers; conversion happens only at the edges.
 */
export const NANO_PER_USD = 1_000_000_000;

export function usdToNano(usd: number): number {
  return Math.round(usd * NANO_PER_USD);
}

export function nanoToUsd(nano: number): number {
  return Number(nano) / NANO_PER_USD;
}

/** Cost in nano-USD of a token-priced call: tokens x USD-per-1M. */
export function tokenCostNano(tokens: number, usdPer1M: number): number {
  // usdPer1M / 1e6 USD per token = usdPer1M * 1e3 nano per token
  return Math.round(tokens * usdPer1M * 1000);
}

/**
 * A token price as integer pico-USD (1e-12) per token: USD-per-1M x 1e6, exact for any price
 * given to 6 decimals. Prices are turned into this once per config; the money path then
 * multiplies and adds integers only and rounds once (picoToNano).
 */
export function picoPerToken(usdPer1M: number): number {
  return Math.round(usdPer1M * 1_000_000);
}

/** Pico-USD to nano-USD, rounded half up (one rounding per call). */
export function picoToNano(pico: number): number {
  return Math.floor((pico + 500) / 1000);
}
