/**
 * Version 5: fewer index writes per gateway call (issue #9). Every metered call inserts
 * a usage record (reserve) and rewrites it (finalize / release); each index on
 * usage_records is one more B-tree page written per commit.
 * - usage_reserved holds only the calls in flight (the orphan sweeper's query names the
 *   same `status = 'reserved'` term): finalize and release now delete one entry from a
 *   tree of a few pages instead of moving it inside a tree of every record ever made.
 * - usage_project_time is gone: no query reads it (project spend reads its own index).
 *   usage_user_time stays: it serves the user foreign key (ON DELETE CASCADE) and
 *   per-user time ranges.
 * (The wide spend covering indexes of version 4, which the reserve insert also wrote,
 * are replaced by version 6's daily rollup.)
 */
export const SCHEMA_V5_GATEWAY = `
DROP INDEX usage_reserved;
CREATE INDEX usage_reserved ON usage_records(created_at) WHERE status = 'reserved';
DROP INDEX usage_project_time;
`;
