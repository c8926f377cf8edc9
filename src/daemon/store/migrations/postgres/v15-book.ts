import { AGW_BOOK_V13 } from './agw-book-v13.js';

/**
 * Version 15 for PostgreSQL (issue #16): agw_book_v13, same signature and same books, with
 * less work for a hot account's batch: its rollup rows are upserted from figures summed in
 * the booking loop, and its account is held by a plain lookup (docs/performance.md, "Sixth
 * pass"). A store migrated to 13 before keeps the body it installed until a migration
 * replaces it (CREATE OR REPLACE): a change to the function's text ships as a migration of
 * its own, like this one (test/pg/store.test.ts holds the text to it). SQLite has nothing to
 * change.
 */
export const SCHEMA_PG_V15_BOOK = AGW_BOOK_V13;
