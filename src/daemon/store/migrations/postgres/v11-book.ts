/**
 * Version 11 for PostgreSQL (issue #16): agw_book_v11 takes a batch as an agw_booking_v7[]
 * instead of JSON (reading the JSON cost PostgreSQL a fifth of a booking's CPU), and the
 * kept bodies with it; agw_book_v7 becomes a wrapper for daemons of the previous version
 * (money/postgres/book.ts). SQLite has nothing to change.
 *
 * Superseded: migration 13 installs the booking function with the schema it needs, so a
 * store migrated from before this version runs its old function until then (an earlier
 * migration installing today's text broke the daemons still running on it). A store that
 * has this version applied keeps it.
 */
export const SCHEMA_PG_V11_BOOK = `SELECT 1 -- superseded by migration 13`;
