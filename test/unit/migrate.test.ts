import { afterEach, describe, expect, it } from 'vitest';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { MIGRATIONS, SCHEMA_VERSION, SchemaTooNewError, migrate, splitStatements } from '../../src/daemon/store/migrations/index.js';

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

describe('migration 18: versions one by one (issue #33)', () => {
  it('recomputes current versions (a prerelease never over a release), backfills installed versions, unarchives what a skill’s archive had archived', async () => {
    db = new SqliteDb(':memory:');
    // a store at version 17, as the previous agw left it
    await db.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    for (const m of MIGRATIONS.filter((x) => x.version < 18)) {
      for (const stmt of splitStatements(m.sqlite)) await db.run(stmt);
      await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, 1]);
    }
    await db.run("INSERT INTO users (id, email, created_at) VALUES ('u1', 'a@example.com', 1), ('u2', 'b@example.com', 1)");
    const skill = (id: number, slug: string, status: string, current: string) =>
      db.run("INSERT INTO skills (id, slug, name, category, status, current_version, owner_id, created_at, updated_at) VALUES (?, ?, ?, 'other', ?, ?, 'u1', 1, 1)", [id, slug, slug, status, current]);
    const version = (id: number, v: string, status: string, at: number) =>
      db.run("INSERT INTO skill_versions (skill_id, version, status, manifest, published_at) VALUES (?, ?, ?, '[]', ?)", [id, v, status, at]);
    // the case: a beta published after 1.1.0 became current
    await skill(1, 'beta-current', 'published', '1.2.0-beta.1');
    await version(1, '1.1.0', 'published', 1);
    await version(1, '1.2.0-beta.1', 'published', 2);
    // an archived skill: the old cascade archived its versions
    await skill(2, 'archived-skill', 'archived', '2.0.0');
    await version(2, '1.0.0', 'archived', 1);
    await version(2, '2.0.0', 'archived', 2);
    // a published skill with one version left archived (archive, then republish of one version): withdrawn
    await skill(3, 'one-back', 'published', '1.0.0');
    await version(3, '1.0.0', 'published', 1);
    await version(3, '2.0.0', 'archived', 2);
    await db.run("INSERT INTO skill_installs (skill_id, user_id, version, created_at) VALUES (1, 'u2', '1.2.0-beta.1', 5), (3, 'u2', '2.0.0', 6)");

    expect((await migrate(db)).applied).toEqual(MIGRATIONS.filter((x) => x.version >= 18).map((x) => x.version));
    expect(await db.all('SELECT id, current_version, pinned_version FROM skills ORDER BY id')).toEqual([
      { id: 1, current_version: '1.1.0', pinned_version: null },
      { id: 2, current_version: '2.0.0', pinned_version: null },
      { id: 3, current_version: '1.0.0', pinned_version: null },
    ]);
    expect(await db.all('SELECT skill_id, version, status FROM skill_versions ORDER BY skill_id, version')).toEqual([
      { skill_id: 1, version: '1.1.0', status: 'published' },
      { skill_id: 1, version: '1.2.0-beta.1', status: 'published' },
      { skill_id: 2, version: '1.0.0', status: 'published' },
      { skill_id: 2, version: '2.0.0', status: 'published' },
      { skill_id: 3, version: '1.0.0', status: 'published' },
      { skill_id: 3, version: '2.0.0', status: 'archived' },
    ]);
    expect(await db.all('SELECT skill_id, user_id, version, created_at FROM skill_version_installs ORDER BY skill_id')).toEqual([
      { skill_id: 1, user_id: 'u2', version: '1.2.0-beta.1', created_at: 5 },
      { skill_id: 3, user_id: 'u2', version: '2.0.0', created_at: 6 },
    ]);
  });
});
