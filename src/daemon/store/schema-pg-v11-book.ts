import { PG_BOOK_FUNCTION } from '../money/pg-book.js';

/**
 * Version 11 for PostgreSQL (issue #16): agw_book_v11 takes a batch as an agw_booking_v7[]
 * instead of JSON (reading the JSON cost PostgreSQL a fifth of a booking's CPU), and the
 * kept bodies with it; agw_book_v7 becomes a wrapper for daemons of the previous version
 * (money/pg-book.ts). SQLite has nothing to change.
 */
export const SCHEMA_PG_V11_BOOK = PG_BOOK_FUNCTION;
