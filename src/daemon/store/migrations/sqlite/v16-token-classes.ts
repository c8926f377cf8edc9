/**
 * Version 16 (issues #28, #29): the request log's record of a call names every token class
 * it used and what the target could not honour.
 * - cache_write_tokens: prompt tokens written to the provider's prompt cache (5-minute and
 *   1-hour writes together; the charge prices each at its own rate).
 * - reasoning_tokens: the part of completion_tokens the model spent thinking.
 * - dropped_params: the request fields the resolved provider could not honour, as a JSON
 *   array of names (NULL: none).
 */
export const SCHEMA_V16_TOKEN_CLASSES = `
ALTER TABLE usage_records ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN reasoning_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE usage_records ADD COLUMN dropped_params TEXT;
`;
