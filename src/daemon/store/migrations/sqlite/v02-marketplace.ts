/**
 * Version 2: indexes for the marketplace's owner views (mine, timeseries) so they do not
 * scan every skill and install.
 */
export const SCHEMA_V2_MARKETPLACE = `
CREATE INDEX skills_owner ON skills(owner_id);
CREATE INDEX skill_installs_skill_time ON skill_installs(skill_id, created_at);
`;
