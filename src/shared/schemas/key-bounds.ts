/**
 * A key's limits as plain values, without TypeBox: the HTTP schemas (keys.ts), the server's
 * checks (daemon/keys/input.ts) and the CLI's flags (cli/key-flags.ts) use these. Kept apart
 * so a CLI command does not load TypeBox's ~370 modules (~130 ms of start-up) for two
 * constants.
 */

/** A key budget's periods (UTC). */
export const BUDGET_PERIODS = ['day', 'week', 'month', 'total'] as const;

/** The bounds of a key's limits. */
export const KEY_LIMIT_BOUNDS = {
  budgetUsd: 1_000_000,
  rpm: 1_000_000,
  tpm: 10_000_000_000,
  models: 100,
  /** one entry of `models`: a model id, provider/model, an alias or a smart-route class */
  modelEntry: /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,199}$/,
} as const;
