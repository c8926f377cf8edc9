import { join } from 'node:path';
import type { Db } from './db.js';
import { SqliteDb } from './sqlite.js';
import { migrate } from './migrate.js';

/** Opens the store named by the config (`sqlite` = DATA_DIR/agw.db) and brings its schema up to date. */
export async function openStore(opts: { store: string; dataDir: string }): Promise<Db> {
  if (opts.store.startsWith('postgres://') || opts.store.startsWith('postgresql://')) {
    throw new Error('PostgreSQL store is not available in this build yet: use store: sqlite');
  }
  const file = opts.store === ':memory:' ? ':memory:' : join(opts.dataDir, 'agw.db');
  const db = new SqliteDb(file);
  try {
    await migrate(db);
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
}
