/** Version 20 for PostgreSQL: the twin of sqlite/v20-provider-key-stats.ts. */
export const SCHEMA_PG_V20_PROVIDER_KEY_STATS = `
CREATE TABLE provider_key_stats (
  daemon_id TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  key_name TEXT NOT NULL,
  calls BIGINT NOT NULL DEFAULT 0,
  failures BIGINT NOT NULL DEFAULT 0,
  cooling_until BIGINT NOT NULL DEFAULT 0,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (daemon_id, provider_id, key_name)
);
`;
