/**
 * Version 9 for PostgreSQL: the twin of migrations/sqlite/v09-request-log.ts (request log indexes,
 * bodies, pruning mark), and agw_book_v9: agw_book_v7 (money/postgres/book.ts) plus the
 * batch's kept bodies (logs.bodies) in the same call, so bodies add no round trip either.
 */
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
CREATE FUNCTION agw_book_v9(p_daemon text, p_bookings jsonb, p_bodies jsonb) RETURNS integer LANGUAGE plpgsql AS $fn$
DECLARE
  v_n integer;
BEGIN
  v_n := agw_book_v7(p_daemon, p_bookings);
  INSERT INTO request_bodies (usage_id, created_at, request, response, request_bytes, response_bytes)
    SELECT x.id, x."createdAt", x.request, x.response, x."requestBytes", x."responseBytes"
      FROM jsonb_to_recordset(p_bodies) AS x(id text, "createdAt" bigint, request text, response text, "requestBytes" bigint, "responseBytes" bigint)
     WHERE EXISTS (SELECT 1 FROM usage_records u WHERE u.id = x.id)
    ON CONFLICT (usage_id) DO NOTHING;
  RETURN v_n;
END
$fn$;
`;
