import type { Db } from './db.js';
import { SCHEMA_V1 } from './schema-v1.js';

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
}

/** Ordered, append-only. Never edit a migration that has shipped: add the next one. */
export const MIGRATIONS: Migration[] = [{ version: 1, name: 'initial schema', sqlite: SCHEMA_V1 }];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

export interface MigrationReport {
  applied: number[];
  current: number;
}

export class SchemaTooNewError extends Error {
  constructor(readonly found: number) {
    super(
      `the store's schema is version ${found} but this agw only knows up to ${SCHEMA_VERSION}: upgrade agw before starting it on this store`,
    );
  }
}

/** Applies every migration the store lacks, each in its own transaction. Safe to run twice. */
export async function migrate(db: Db): Promise<MigrationReport> {
  await db.exec(
    'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)',
  );
  const row = await db.get<{ v: number | null }>('SELECT MAX(version) AS v FROM schema_migrations');
  const have = Number(row?.v ?? 0);
  if (have > SCHEMA_VERSION) throw new SchemaTooNewError(have);
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= have) continue;
    await db.tx(async (q) => {
      // Another process may have migrated meanwhile: re-check inside the write lock.
      const done = await q.get('SELECT version FROM schema_migrations WHERE version = ?', [m.version]);
      if (done) return;
      for (const stmt of splitStatements(m.sqlite)) await q.run(stmt);
      await q.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [
        m.version,
        m.name,
        Date.now(),
      ]);
      applied.push(m.version);
    });
  }
  return { applied, current: Math.max(have, SCHEMA_VERSION) };
}

function splitStatements(sql: string): string[] {
  return sql
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ''))
    .filter((s) => s.length > 0);
}
