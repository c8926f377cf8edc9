/** Version 5 for PostgreSQL: the twin of migrations/sqlite/v05-gateway.ts (in-flight-only usage_reserved, no usage_project_time). */
export const SCHEMA_PG_V5_GATEWAY = `
DROP INDEX usage_reserved;
CREATE INDEX usage_reserved ON usage_records(created_at) WHERE status = 'reserved';
DROP INDEX usage_project_time;
`;
