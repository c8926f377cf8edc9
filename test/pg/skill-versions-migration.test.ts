import { afterAll, describe, expect, test } from 'vitest';
import type { Db } from '../../src/daemon/store/db.js';
import { MIGRATIONS, migrate } from '../../src/daemon/store/migrations/index.js';
import { PgDb } from '../../src/daemon/store/postgres.js';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

/**
 * Migration 18 on a store the previous agw left (version 17), once per dialect: current
 * versions recomputed (issue #33: a beta published after 1.1.0 had become current), the
 * versions each account installed backfilled, and what a skill's archive had archived
 * published again (a version's `archived` now means that version was withdrawn).
 */
const dbs: TestDatabase[] = [];
const opened: Db[] = [];
afterAll(async () => {
  for (const db of opened) await db.close();
  for (const d of dbs) await d.drop();
});

async function storeAtVersion17(dialect: 'sqlite' | 'postgres'): Promise<Db> {
  let db: Db;
  if (dialect === 'sqlite') db = new SqliteDb(':memory:');
  else {
    const t = await createTestDatabase({ migrated: false });
    dbs.push(t);
    db = new PgDb(t.url);
  }
  opened.push(db);
  await db.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
  for (const m of MIGRATIONS.filter((x) => x.version < 18)) {
    await db.exec(dialect === 'postgres' ? m.postgres : m.sqlite);
    await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, Date.now()]);
  }
  return db;
}

describe.each(['sqlite', 'postgres'] as const)('migration 18 on %s', (dialect) => {
  test('recomputes current versions, backfills installed versions, publishes what a skill’s archive had archived', async () => {
    const db = await storeAtVersion17(dialect);
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
    // a published skill with one version left archived (the skill archived, then one version republished): that one stays withdrawn
    await skill(3, 'one-back', 'published', '1.0.0');
    await version(3, '1.0.0', 'published', 1);
    await version(3, '2.0.0', 'archived', 2);
    await db.run("INSERT INTO skill_installs (skill_id, user_id, version, created_at) VALUES (1, 'u2', '1.2.0-beta.1', 5), (3, 'u2', '2.0.0', 6)");

    expect((await migrate(db)).applied).toEqual(MIGRATIONS.filter((x) => x.version >= 18).map((x) => x.version));
    const skills = await db.all<{ id: number; current_version: string; pinned_version: string | null }>('SELECT id, current_version, pinned_version FROM skills ORDER BY id');
    expect(skills.map((s) => [Number(s.id), s.current_version, s.pinned_version])).toEqual([
      [1, '1.1.0', null],
      [2, '2.0.0', null],
      [3, '1.0.0', null],
    ]);
    const versions = await db.all<{ skill_id: number; version: string; status: string }>('SELECT skill_id, version, status FROM skill_versions ORDER BY skill_id, version');
    expect(versions.map((v) => [Number(v.skill_id), v.version, v.status])).toEqual([
      [1, '1.1.0', 'published'],
      [1, '1.2.0-beta.1', 'published'],
      [2, '1.0.0', 'published'],
      [2, '2.0.0', 'published'],
      [3, '1.0.0', 'published'],
      [3, '2.0.0', 'archived'],
    ]);
    const installed = await db.all<{ skill_id: number; user_id: string; version: string; created_at: number }>(
      'SELECT skill_id, user_id, version, created_at FROM skill_version_installs ORDER BY skill_id',
    );
    expect(installed.map((r) => [Number(r.skill_id), r.user_id, r.version, Number(r.created_at)])).toEqual([
      [1, 'u2', '1.2.0-beta.1', 5],
      [3, 'u2', '2.0.0', 6],
    ]);
  });
});
