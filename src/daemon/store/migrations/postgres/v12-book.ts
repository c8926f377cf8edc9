/**
 * Version 12 for PostgreSQL (issue #16): agw_book_v11, same signature and same books, with
 * less work per batch: the usage records are inserted without sorting the whole rows, and
 * the rollups join what was written off only when something was (docs/performance.md,
 * "Fourth pass"). SQLite has nothing to change.
 *
 * Superseded: migration 13 installs the booking function with the schema it needs, so a
 * store migrated from before this version runs its old function until then (an earlier
 * migration installing today's text broke the daemons still running on it). A store that
 * has this version applied keeps it.
 */
export const SCHEMA_PG_V12_BOOK = `SELECT 1 -- superseded by migration 13`;
