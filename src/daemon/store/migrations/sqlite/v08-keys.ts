/**
 * Version 8: keys with limits (issue #17, CONTRACT "Keys with limits").
 * - api_keys gains the key's limits: budget_nusd per budget_period ('day' | 'week' |
 *   'month' | 'total'), rpm, tpm, models (a JSON array of allowed model ids or aliases)
 *   and expires_at (epoch ms); NULL = no such limit. What a key spent in a budget period
 *   is key_spend (version 7).
 * - parent_key_id: the limited key that created this one over POST /api/keys (NULL for
 *   keys made by an operator, a session, an OAuth token or an unlimited key). A key's
 *   limits stay within its parent's (checked on every change; narrowing or revoking a
 *   parent narrows or revokes its descendants in the same transaction): api_keys_parent
 *   finds them.
 */
export const SCHEMA_V8_KEYS = `
ALTER TABLE api_keys ADD COLUMN budget_nusd INTEGER;
ALTER TABLE api_keys ADD COLUMN budget_period TEXT;
ALTER TABLE api_keys ADD COLUMN rpm INTEGER;
ALTER TABLE api_keys ADD COLUMN tpm INTEGER;
ALTER TABLE api_keys ADD COLUMN models TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at INTEGER;
ALTER TABLE api_keys ADD COLUMN parent_key_id TEXT REFERENCES api_keys(id) ON DELETE CASCADE;
CREATE INDEX api_keys_parent ON api_keys(parent_key_id) WHERE parent_key_id IS NOT NULL;
`;
