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
