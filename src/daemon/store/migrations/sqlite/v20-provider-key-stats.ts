/**
 * Version 20 (issue #30): provider keys' health where `agw admin providers` reads it (the
 * command runs in another process than the daemon). Each daemon writes one row per key
 * every `gateway.keyStatsFlushMs` and when it stops: the calls and failures it counted since
 * it started, and until when the key cools down there. Rows of daemons gone for 30 days are
 * deleted.
 */
export const SCHEMA_V20_PROVIDER_KEY_STATS = `
CREATE TABLE provider_key_stats (
  daemon_id TEXT NOT NULL,
  provider_id TEXT NOT NULL,
  key_name TEXT NOT NULL,
  calls INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  cooling_until INTEGER NOT NULL DEFAULT 0,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (daemon_id, provider_id, key_name)
);
`;
