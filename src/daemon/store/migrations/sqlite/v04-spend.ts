/**
 * Version 4: what the portal needs.
 * - Covering indexes for the spend reports, ordered so that the GROUP BYs stream from
 *   the index without a sort: a year of one busy user's usage (1M rows) is aggregated
 *   from the index alone. Day = created_at / 86400000 (a UTC day), the same expression
 *   the daily report groups by.
 * - login_attempts: the portal's login throttle, in the store so that several daemons
 *   on one database share it. One row per attempt that has not (yet) succeeded.
 */
export const SCHEMA_V4_SPEND = `
CREATE INDEX usage_user_spend ON usage_records(user_id, provider_id, project_id, created_at, status, raw_cost_nusd, customer_cost_nusd);
CREATE INDEX usage_user_daily ON usage_records(user_id, (created_at / 86400000), created_at, status, raw_cost_nusd, customer_cost_nusd);
CREATE INDEX usage_project_spend ON usage_records(project_id, provider_id, created_at, status, raw_cost_nusd, customer_cost_nusd);
CREATE TABLE login_attempts (
  id TEXT PRIMARY KEY,
  scope_key TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX login_attempts_scope ON login_attempts(scope_key, created_at);
`;
