/** Version 9 for PostgreSQL: the twin of schema-v9-request-log.ts (request log indexes, bodies, pruning mark). */
export const SCHEMA_PG_V9_REQUEST_LOG = `
DROP INDEX usage_user_time;
CREATE INDEX usage_user_log ON usage_records(user_id, created_at, id);
CREATE INDEX usage_log_time ON usage_records(created_at, id);
CREATE INDEX usage_log_settled ON usage_records(finalized_at, id);
CREATE TABLE request_bodies (
  usage_id TEXT PRIMARY KEY REFERENCES usage_records(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  request TEXT,
  response TEXT,
  request_bytes BIGINT NOT NULL DEFAULT 0,
  response_bytes BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX request_bodies_time ON request_bodies(created_at);
CREATE TABLE request_log_pruned (
  id BIGINT PRIMARY KEY,
  before_ms BIGINT NOT NULL
);
`;
