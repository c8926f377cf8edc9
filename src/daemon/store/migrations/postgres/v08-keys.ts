/** Version 8 for PostgreSQL: the twin of migrations/sqlite/v08-keys.ts. */
export const SCHEMA_PG_V8_KEYS = `
ALTER TABLE api_keys ADD COLUMN budget_nusd BIGINT;
ALTER TABLE api_keys ADD COLUMN budget_period TEXT;
ALTER TABLE api_keys ADD COLUMN rpm BIGINT;
ALTER TABLE api_keys ADD COLUMN tpm BIGINT;
ALTER TABLE api_keys ADD COLUMN models TEXT;
ALTER TABLE api_keys ADD COLUMN expires_at BIGINT;
ALTER TABLE api_keys ADD COLUMN parent_key_id TEXT REFERENCES api_keys(id) ON DELETE CASCADE;
CREATE INDEX api_keys_parent ON api_keys(parent_key_id) WHERE parent_key_id IS NOT NULL;
`;
