/**
 * Version 6: the daily spend rollup (issues #6, #9).
 * - spend_daily: one row per (user, UTC day, provider, project tag) with the completed
 *   calls of that day, kept in the same transaction as each usage record's settlement
 *   (store/spend-rollup.ts), so the spend reports read days × providers × projects rows
 *   instead of every usage record. day = created_at / 86400000 (a UTC day number);
 *   project_key is the project uid, '' for untagged calls.
 * - Backfilled from the completed usage records already stored.
 * - The three wide covering indexes of version 4 go: the reports no longer need them, and
 *   every settled gateway call wrote them. What the reports still read from
 *   usage_records is the partial first day of a range: per user through usage_user_time
 *   (user_id, created_at), per project through usage_project_completed, a narrow
 *   partial index (completed, tagged calls only: reserve never writes it).
 */
export const SCHEMA_V6_SPEND_ROLLUP = `
CREATE TABLE spend_daily (
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day INTEGER NOT NULL,
  provider_id TEXT NOT NULL,
  project_key TEXT NOT NULL,
  calls INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  raw_nusd INTEGER NOT NULL DEFAULT 0,
  customer_nusd INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (user_id, day, provider_id, project_key)
) WITHOUT ROWID;
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
