/** Version 7 for PostgreSQL: the twin of schema-v7-money.ts (the lease functions follow in money/pg-functions.ts). */
export const SCHEMA_PG_V7_MONEY = `
ALTER TABLE usage_records ADD COLUMN key_id TEXT;
ALTER TABLE usage_records ADD COLUMN stream BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN answer_status BIGINT;
ALTER TABLE usage_records ADD COLUMN error_code TEXT;
ALTER TABLE usage_records ADD COLUMN cached_tokens BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN latency_ms DOUBLE PRECISION;
ALTER TABLE usage_records ADD COLUMN ttfb_ms DOUBLE PRECISION;
ALTER TABLE usage_records ADD COLUMN attempts BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN hold_nusd BIGINT NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN written_off_nusd BIGINT NOT NULL DEFAULT 0;
CREATE INDEX usage_key_time ON usage_records(key_id, created_at) WHERE key_id IS NOT NULL;
ALTER TABLE wallets ADD COLUMN leased_nusd BIGINT NOT NULL DEFAULT 0;
ALTER TABLE quota_counters ADD COLUMN leased BIGINT NOT NULL DEFAULT 0;
CREATE TABLE key_spend (
  key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  period TEXT NOT NULL,
  spent_nusd BIGINT NOT NULL DEFAULT 0,
  leased_nusd BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (key_id, period)
);
CREATE TABLE spend_key_daily (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day BIGINT NOT NULL,
  key_id TEXT NOT NULL,
  calls BIGINT NOT NULL DEFAULT 0,
  failures BIGINT NOT NULL DEFAULT 0,
  raw_nusd BIGINT NOT NULL DEFAULT 0,
  customer_nusd BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, day, key_id)
);
CREATE TABLE rate_buckets (
  key_id TEXT NOT NULL REFERENCES api_keys(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  level DOUBLE PRECISION NOT NULL,
  at_ms BIGINT NOT NULL,
  PRIMARY KEY (key_id, kind)
);
CREATE TABLE daemons (
  id TEXT PRIMARY KEY,
  started_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE TABLE leases (
  pot TEXT NOT NULL,
  daemon_id TEXT NOT NULL REFERENCES daemons(id) ON DELETE CASCADE,
  amount BIGINT NOT NULL DEFAULT 0,
  held BIGINT NOT NULL DEFAULT 0,
  held_calls BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (pot, daemon_id)
);
CREATE INDEX leases_daemon ON leases(daemon_id);
`;
