/** Version 6 for PostgreSQL: the twin of migrations/sqlite/v06-spend-rollup.ts (daily spend rollup, backfill, v4 indexes dropped). */
export const SCHEMA_PG_V6_SPEND_ROLLUP = `
CREATE TABLE spend_daily (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day BIGINT NOT NULL,
  provider_id TEXT NOT NULL,
  project_key TEXT NOT NULL,
  calls BIGINT NOT NULL DEFAULT 0,
  failures BIGINT NOT NULL DEFAULT 0,
  raw_nusd BIGINT NOT NULL DEFAULT 0,
  customer_nusd BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, day, provider_id, project_key)
);
CREATE INDEX spend_daily_project ON spend_daily(project_key, day);
INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
  SELECT user_id, created_at / 86400000, provider_id, COALESCE(project_id, ''), COUNT(*),
         SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), SUM(raw_cost_nusd), SUM(customer_cost_nusd)
    FROM usage_records
   WHERE status IN ('finalized', 'failed')
   GROUP BY user_id, created_at / 86400000, provider_id, COALESCE(project_id, '');
DROP INDEX usage_user_spend;
DROP INDEX usage_user_daily;
DROP INDEX usage_project_spend;
CREATE INDEX usage_project_completed ON usage_records(project_id, created_at)
  WHERE project_id IS NOT NULL AND status IN ('finalized', 'failed');
`;
