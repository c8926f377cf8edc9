import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { MIGRATIONS, SCHEMA_VERSION, SchemaTooNewError, migrate } from '../../src/daemon/store/migrations/index.js';

/** Versioned migrations run on start, are safe to run twice and refuse a newer store. */
let db: SqliteDb;
afterEach(() => db?.close());

const schemaOf = (d: SqliteDb) => d.all<{ type: string; name: string; sql: string | null }>('SELECT type, name, sql FROM sqlite_master ORDER BY type, name');

describe('migrations', () => {
  it('create every table of the issue on a fresh store, in version order', async () => {
    db = new SqliteDb(':memory:');
    const report = await migrate(db);
    expect(report.applied).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
    expect(report.current).toBe(SCHEMA_VERSION);
    const tables = (await schemaOf(db)).filter((r) => r.type === 'table').map((r) => r.name);
    for (const t of ['users', 'organizations', 'org_members', 'tiers', 'api_keys', 'wallets', 'wallet_transactions', 'projects', 'project_roles', 'usage_records', 'quota_counters', 'quota_overrides', 'oauth_clients', 'sessions', 'skills', 'skill_versions', 'schema_migrations'])
      expect(tables, t).toContain(t);
  });

  it('are a no-op the second time', async () => {
    db = new SqliteDb(':memory:');
    await migrate(db);
    const before = await schemaOf(db);
    const rows = await db.all('SELECT version, applied_at FROM schema_migrations ORDER BY version');
    expect(await migrate(db)).toEqual({ applied: [], current: SCHEMA_VERSION });
    expect(await schemaOf(db)).toEqual(before);
    expect(await db.all('SELECT version, applied_at FROM schema_migrations ORDER BY version')).toEqual(rows);
  });

  it('refuse a store whose schema is newer than this code, with a clear message', async () => {
    db = new SqliteDb(':memory:');
    await migrate(db);
    await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [SCHEMA_VERSION + 1, 'from the future', Date.now()]);
    const err = await migrate(db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect((err as Error).message).toContain(`version ${SCHEMA_VERSION + 1}`);
    expect((err as Error).message).toContain(`up to ${SCHEMA_VERSION}`);
    expect((err as SchemaTooNewError & { hint: string }).hint).toMatch(/upgrade agw/);
  });
});
