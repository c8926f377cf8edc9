import { PG_BOOK_FUNCTION } from '../../../money/postgres/book.js';
import { PG_BOOK_TYPE } from '../../../money/postgres/booking-row.js';

/**
 * Version 16 for PostgreSQL: the twin of sqlite/v16-token-classes.ts, and the booking type
 * and function that write the new columns: agw_booking_v16 (agw_booking_v7's fields plus
 * "cacheWriteTokens", "reasoningTokens", "droppedParams") and agw_book_v16 (money/postgres/
 * book.ts). agw_book_v13 and agw_booking_v7 stay for daemons of the previous version during
 * a rolling upgrade (their calls book with the new columns at their defaults).
 */
export const SCHEMA_PG_V16_TOKEN_CLASSES = `
ALTER TABLE usage_records ADD COLUMN cache_write_tokens BIGINT NOT NULL DEFAULT 0, ADD COLUMN reasoning_tokens BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN dropped_params TEXT;
${PG_BOOK_TYPE}
${PG_BOOK_FUNCTION}
`;
