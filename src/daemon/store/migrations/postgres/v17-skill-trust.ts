/** Version 17 for PostgreSQL: the twin of migrations/sqlite/v17-skill-trust.ts. */
export const SCHEMA_PG_V17_SKILL_TRUST = `
ALTER TABLE skill_versions ADD COLUMN digest TEXT;
ALTER TABLE skill_versions ADD COLUMN signature_kid TEXT;
ALTER TABLE skill_versions ADD COLUMN signature TEXT;
ALTER TABLE skill_versions ADD COLUMN scan TEXT;
CREATE TABLE skill_signing_keys (
  kid TEXT PRIMARY KEY,
  private_jwk TEXT NOT NULL,
  public_jwk TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  retired_at BIGINT
);
`;
