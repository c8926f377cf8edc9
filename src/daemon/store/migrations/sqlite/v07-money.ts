/**
 * Version 7: the money engine of the second round (issues #15–#18).
 * - usage_records becomes the request log too: one row per gateway call, refused calls
 *   included (status 'refused'), with the key that made it, whether it streamed, the
 *   status agw answered and its error code, cached tokens, latency, time to first byte,
 *   the upstreams tried, the hold its admission took and what was written off (cost the
 *   provider reported beyond the hold: never charged).
 * - wallets.leased_nusd, quota_counters.leased: what daemons on a shared PostgreSQL have
 *   taken in slices (budget leases, money/postgres/); always 0 on SQLite, whose one daemon
 *   admits against the store itself.
 * - key_spend: what each key spent per budget period (day, week, month or 'total').
 * - spend_key_daily: the daily spend rollup per key (the spend summary's byKey).
 * - rate_buckets: a key's request and token buckets (rpm/tpm), shared by daemons.
 * - daemons, leases: who holds which slice, until when (PostgreSQL).
 */
export const SCHEMA_V7_MONEY = `
ALTER TABLE usage_records ADD COLUMN key_id TEXT;
ALTER TABLE usage_records ADD COLUMN stream INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN answer_status INTEGER;
ALTER TABLE usage_records ADD COLUMN error_code TEXT;
ALTER TABLE usage_records ADD COLUMN cached_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN latency_ms REAL;
ALTER TABLE usage_records ADD COLUMN ttfb_ms REAL;
ALTER TABLE usage_records ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN hold_nusd INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN written_off_nusd INTEGER NOT NULL DEFAULT 0;
ALTER TABLE wallets ADD COLUMN leased_nusd INTEGER NOT NULL DEFAULT 0;
ALTER TABLE quota_counters ADD COLUMN leased INTEGER NOT NULL DEFAULT 0;
CREATE TABLE key_spend (
  key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  period TEXT NOT NULL,
  spent_nusd INTEGER NOT NULL DEFAULT 0,
  leased_nusd INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, period)
);
CREATE TABLE spend_key_daily (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day INTEGER NOT NULL,
  key_id TEXT NOT NULL,
  calls INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  raw_nusd INTEGER NOT NULL DEFAULT 0,
  customer_nusd INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, day, key_id)
);
CREATE TABLE rate_buckets (
  key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  level REAL NOT NULL,
  at_ms INTEGER NOT NULL,
  PRIMARY KEY (key_id, kind)
);
CREATE TABLE daemons (
  id TEXT PRIMARY KEY,
  started_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE TABLE leases (
  pot TEXT NOT NULL,
  daemon_id TEXT NOT NULL REFERENCES daemons(id) ON DELETE CASCADE,
  amount INTEGER NOT NULL DEFAULT 0,
  held INTEGER NOT NULL DEFAULT 0,
  held_calls INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (pot, daemon_id)
);
CREATE INDEX leases_daemon ON leases(daemon_id);
`;
