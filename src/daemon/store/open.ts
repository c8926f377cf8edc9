import { join } from 'node:path';
import type { Db } from './db.js';
import { SqliteDb } from './sqlite.js';
import type { PgDb } from './postgres.js';
import { migrate, type MigrationReport } from './migrations/index.js';
import { StoreOpenError } from './errors.js';

export function isPostgresUrl(store: string): boolean {
  return /^postgres(ql)?:\/\//.test(store);
}

/**
 * Opens the store named by the config (`sqlite` = DATA_DIR/agw.db, or a postgres:// URL)
 * and brings its schema up to date. Throws StoreOpenError (clear message, hint, code)
 * when PostgreSQL cannot be reached or the schema is newer than this code.
 */
export async function openStore(opts: { store: string; dataDir: string }): Promise<Db> {
  return (await openAndMigrate(opts)).db;
}

/** `openStore` that also says which migrations it applied (`agw admin migrate`). */
export async function openAndMigrate(opts: { store: string; dataDir: string }): Promise<{ db: Db; report: MigrationReport }> {
  const db = isPostgresUrl(opts.store) ? await connectPostgres(opts.store) : openSqlite(opts);
  try {
    return { db, report: await migrate(db) };
  } catch (e) {
    await db.close();
    if (e instanceof StoreOpenError) throw e;
    const err = e as Error & { code?: string };
    throw new StoreOpenError(
      'STORE_MIGRATION_FAILED',
      `could not migrate the store's schema: ${err.message}${err.code ? ` (${err.code})` : ''}`,
      db.dialect === 'postgres'
        ? 'the database user needs to create tables and the citext extension in this database'
        : 'check that the data directory is writable',
    );
  }
}

function openSqlite(opts: { store: string; dataDir: string }): Db {
  return new SqliteDb(opts.store === ':memory:' ? ':memory:' : join(opts.dataDir, 'agw.db'));
}

async function connectPostgres(url: string): Promise<PgDb> {
  // the driver is loaded for a PostgreSQL store only (a SQLite daemon saves its ~3 MB of heap)
  const { PgDb } = await import('./postgres.js');
  let db: PgDb;
  try {
    db = new PgDb(url);
  } catch (e) {
    throw new StoreOpenError('INVALID_STORE_URL', (e as Error).message, 'store: postgres://USER@HOST:PORT/DATABASE?pool_max=10');
  }
  try {
    await db.ping();
  } catch (e) {
    await db.close().catch(() => {});
    const err = e as Error & { code?: string };
    throw new StoreOpenError(
      'STORE_UNAVAILABLE',
      `cannot reach the PostgreSQL store at ${db.settings.display}: ${err.message}${err.code ? ` (${err.code})` : ''}`,
      'check that PostgreSQL runs and accepts this user, and the store URL in the config (store:) or AGW_STORE',
    );
  }
  return db;
}
