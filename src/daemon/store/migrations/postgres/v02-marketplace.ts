/** Version 2 for PostgreSQL: the twin of migrations/sqlite/v02-marketplace.ts (marketplace owner indexes). */
export const SCHEMA_PG_V2_MARKETPLACE = `
CREATE INDEX skills_owner ON skills(owner_id);
CREATE INDEX skill_installs_skill_time ON skill_installs(skill_id, created_at);
`;
