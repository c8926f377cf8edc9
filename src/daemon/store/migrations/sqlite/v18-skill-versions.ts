/**
 * Version 18: versions an owner steers one by one (issue #33).
 * - skills.pinned_version: the version the owner made current (PATCH /api/skills/{id}
 *   {currentVersion}); NULL: the rule decides (the highest published release).
 * - skill_version_installs: every version each account installed, so an archived version
 *   stays installable for the accounts that had it and for nobody else. Backfilled from
 *   skill_installs (the version each account installed last).
 * - Archiving a skill no longer archives its versions (the skill's status hides it); what
 *   earlier cascades archived in skills that are not published becomes published again, so
 *   `archived` on a version means that one version was withdrawn.
 * The current versions are then recomputed with the new rule (prereleases are never current
 * over a release): code, not SQL (migrations/index.ts runs recomputeCurrentVersions).
 */
export const SCHEMA_V18_SKILL_VERSIONS = `
ALTER TABLE skills ADD COLUMN pinned_version TEXT;
CREATE TABLE skill_version_installs (
  skill_id INTEGER NOT NULL REFERENCES skills(id) ON DELETE CASCADE,
  user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  version TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (skill_id, user_id, version)
);
INSERT INTO skill_version_installs (skill_id, user_id, version, created_at)
  SELECT skill_id, user_id, version, created_at FROM skill_installs;
UPDATE skill_versions SET status = 'published'
  WHERE status = 'archived' AND skill_id IN (SELECT id FROM skills WHERE status <> 'published');
`;
