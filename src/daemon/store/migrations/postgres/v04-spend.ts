/** Version 4 for PostgreSQL: the twin of migrations/sqlite/v04-spend.ts (spend covering indexes, login attempts). */
export const SCHEMA_PG_V4_SPEND = `
CREATE INDEX usage_user_spend ON usage_records(user_id, provider_id, project_id, created_at, status, raw_cost_nusd, customer_cost_nusd);
CREATE INDEX usage_user_daily ON usage_records(user_id, (created_at / 86400000), created_at, status, raw_cost_nusd, customer_cost_nusd);
CREATE INDEX usage_project_spend ON usage_records(project_id, provider_id, created_at, status, raw_cost_nusd, customer_cost_nusd);
CREATE TABLE login_attempts (
  id TEXT PRIMARY KEY,
  scope_key TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX login_attempts_scope ON login_attempts(scope_key, created_at);
`;
