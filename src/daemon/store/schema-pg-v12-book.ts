import { PG_BOOK_FUNCTION } from '../money/pg-book.js';

/**
 * Version 12 for PostgreSQL (issue #16): agw_book_v11, same signature and same books, with
 * less work per batch: the usage records are inserted without sorting the whole rows, and
 * the rollups join what was written off only when something was (docs/performance.md,
 * "Fourth pass"). SQLite has nothing to change.
 */
export const SCHEMA_PG_V12_BOOK = PG_BOOK_FUNCTION;
