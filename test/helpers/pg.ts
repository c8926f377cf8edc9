import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { MIGRATIONS } from '../../src/daemon/store/migrations/index.js';
import { openAndMigrate } from '../../src/daemon/store/open.js';

/**
 * Throwaway PostgreSQL databases for tests: each test creates its own
 * `agw_test_<random>` through the `postgres` maintenance database and drops it after,
 * so parallel runs never see each other's data. Server: AGW_TEST_PG (default
 * postgres://postgres@127.0.0.1:5432, trust auth). `agw_tpl_<hash>` databases are
 * migrated templates they are copied from; drop them freely between runs.
 */
export const PG_SERVER = (process.env.AGW_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');

/** True when the test matrix asks for the PostgreSQL backend. */
export const usePostgres = process.env.AGW_TEST_STORE === 'postgres';

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: `${PG_SERVER}/postgres`, connectionTimeoutMillis: 5000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestDatabase {
  name: string;
  /** postgres://…/agw_test_… */
  url: string;
  drop(): Promise<void>;
}

/** Retries a statement that fails only because a just-closed session still holds the database (55006). */
async function whileInUse(fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      await fn();
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== '55006' || i >= 50) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

let templateName: Promise<string> | undefined;

/**
 * A database migrated to the current schema, named after a hash of every migration's
 * PostgreSQL text, made once per schema (an advisory lock makes parallel test workers
 * wait for the first) and then copied: `CREATE DATABASE … TEMPLATE` takes ~0.1 s where
 * migrating a fresh database takes ~1 s.
 */
function migratedTemplate(): Promise<string> {
  templateName ??= (async () => {
    const hash = createHash('sha256')
      .update(MIGRATIONS.map((m) => `${m.version}\0${m.postgres}`).join('\0'))
      .digest('hex')
      .slice(0, 16);
    const name = `agw_tpl_${hash}`;
    await admin(async (c) => {
      await c.query('SELECT pg_advisory_lock(hashtext($1))', [name]);
      try {
        if ((await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount) return;
        const building = `${name}_${randomBytes(3).toString('hex')}`;
        await c.query(`CREATE DATABASE ${building}`);
        try {
          const { db } = await openAndMigrate({ store: `${PG_SERVER}/${building}?pool_max=1`, dataDir: '/nonexistent' });
          await db.close();
          await whileInUse(() => c.query(`ALTER DATABASE ${building} RENAME TO ${name}`));
        } catch (e) {
          await c.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
          throw e;
        }
      } finally {
        await c.query('SELECT pg_advisory_unlock(hashtext($1))', [name]);
      }
    });
    return name;
  })();
  return templateName;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

let orphansSwept: Promise<void> | undefined;

/** Drops test databases whose creating process is gone (a run killed before its cleanup). */
function sweepOrphans(): Promise<void> {
  orphansSwept ??= admin(async (c) => {
    const rows = (await c.query<{ datname: string }>("SELECT datname FROM pg_database WHERE datname LIKE 'agw\\_test\\_%'")).rows;
    for (const { datname } of rows) {
      const pid = Number(/^agw_test_(\d+)_/.exec(datname)?.[1]);
      if (pid && !alive(pid)) await c.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`).catch(() => {});
    }
  }).catch(() => {});
  return orphansSwept;
}

/** A fresh database with the current schema (`migrated: false`: empty, for migration tests). */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  await sweepOrphans();
  const name = `agw_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = opts.migrated === false ? undefined : await migratedTemplate();
  await admin((c) => whileInUse(() => c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)));
  let dropped = false;
  return {
    name,
    url: `${PG_SERVER}/${name}`,
    async drop() {
      if (dropped) return;
      dropped = true;
      await admin(async (c) => {
        await c.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
        await c.query(`DROP DATABASE IF EXISTS ${name}`);
      });
    },
  };
}

/** Whether a PostgreSQL server answers at PG_SERVER (tests that need one fail loudly without it). */
export async function pgAvailable(): Promise<boolean> {
  try {
    await admin((c) => c.query('SELECT 1'));
    return true;
  } catch {
    return false;
  }
}
