/** Version 18 for PostgreSQL: the twin of migrations/sqlite/v18-skill-versions.ts. */
export const SCHEMA_PG_V18_SKILL_VERSIONS = `
ALTER TABLE skills ADD COLUMN pinned_version TEXT;
CREATE TABLE skill_version_installs (
  skill_id BIGINT NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  version TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (skill_id, user_id, version)
);
INSERT INTO skill_version_installs (skill_id, user_id, version, created_at)
  SELECT skill_id, user_id, version, created_at FROM skill_installs;
UPDATE skill_versions SET status = 'published'
  WHERE status = 'archived' AND skill_id IN (SELECT id FROM skills WHERE status <> 'published');
`;
