/**
 * Version 9: the request log (issue #18). usage_records has been the request log since
 * version 7 (one row per gateway call, refused ones included); this adds what reading it
 * needs, and its retention.
 * - usage_user_log (user_id, created_at, id) replaces usage_user_time (user_id, created_at):
 *   an account's calls newest first with the (created_at, id) cursor, read in index order
 *   (no sort, however many rows); it still serves the user foreign key and the spend
 *   reports' partial first day.
 * - usage_log_time (created_at, id): the master token's listing of every account, and the
 *   retention pruner's "older than" (bounded batches in index order).
 * - usage_log_settled (finalized_at, id): the live stream (GET /api/requests/stream) reads
 *   the calls settled since it last looked, in settle order (a long stream settles long
 *   after its created_at).
 * - request_bodies: request and answer bodies (logs.bodies: true), size-capped and redacted,
 *   deleted with their record (and earlier, by logs.bodiesRetentionDays).
 * - request_log_pruned: one row: records created before `before_ms` may have been pruned
 *   (a UTC day boundary). The spend reports read a range's first day from the rollup when
 *   it lies before it (store/spend.ts).
 */
export const SCHEMA_V9_REQUEST_LOG = `
DROP INDEX usage_user_time;
CREATE INDEX usage_user_log ON usage_records(user_id, created_at, id);
CREATE INDEX usage_log_time ON usage_records(created_at, id);
CREATE INDEX usage_log_settled ON usage_records(finalized_at, id);
CREATE TABLE request_bodies (
  usage_id TEXT PRIMARY KEY REFERENCES usage_records(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  request TEXT,
  response TEXT,
  request_bytes INTEGER NOT NULL DEFAULT 0,
  response_bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX request_bodies_time ON request_bodies(created_at);
CREATE TABLE request_log_pruned (
  id INTEGER PRIMARY KEY,
  before_ms INTEGER NOT NULL
);
`;
