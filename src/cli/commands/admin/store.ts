import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig, ConfigError } from '../../../shared/config/load.js';
import type { ResolvedConfig } from '../../../shared/config/resolve.js';
import type { Db } from '../../../daemon/store/db.js';
import { isPostgresUrl, openAndMigrate } from '../../../daemon/store/open.js';
import type { MigrationReport } from '../../../daemon/store/migrations/index.js';
import { configFileFor, defaultDataDir } from '../../../daemon/paths.js';
import { CliError, UsageError, storeError } from '../../errors.js';
import { printJson, printKv, printTable } from '../../output.js';

export interface Opts {
  data?: string;
  config?: string;
  json?: boolean;
  [k: string]: unknown;
}

/** The store as a person should see it: the SQLite file, or the PostgreSQL URL without its password. */
function describeStore(store: string, dataDir: string): string {
  if (!isPostgresUrl(store)) return store === ':memory:' ? ':memory:' : join(dataDir, 'agw.db');
  try {
    const u = new URL(store);
    return `postgres://${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** How an admin command treats a data directory without a store: create it (`user create`, `migrate`) or refuse. */
export type WhenMissing = 'create' | 'refuse';

/**
 * Opens the store named by --data/--config (as `agw serve` resolves it), runs `fn` and
 * prints its result: `--json` one document; otherwise key/value lines, or a table for
 * `{items: [...]}`. On a terminal (stdout or stderr) a first stderr line names the store
 * it acts on, so a command run against the wrong data directory shows it. A SQLite data
 * directory without a store is refused (STORE_NOT_FOUND) unless the command creates one.
 */
export async function withStore<T>(
  opts: Opts,
  fn: (db: Db, config: ResolvedConfig, migrated: MigrationReport) => Promise<T>,
  whenMissing: WhenMissing = 'refuse',
  /** prints the result for a person (default: key/value lines, or a table of `items`) */
  human?: (out: T) => void,
): Promise<void> {
  const dataDir = resolve(opts.data ?? defaultDataDir());
  let config: ResolvedConfig;
  try {
    config = loadConfig(configFileFor(dataDir, opts.config));
  } catch (e) {
    if (e instanceof ConfigError) throw new UsageError(e.message);
    throw e;
  }
  const where = describeStore(config.store, dataDir);
  const fresh = !isPostgresUrl(config.store) && config.store !== ':memory:' && !existsSync(where);
  if (fresh && whenMissing === 'refuse') {
    throw new CliError(
      `no store at ${where}: nothing to act on`,
      `name the daemon's data directory (--data DIR or AGW_DATA; agw serve uses ${defaultDataDir()} by default), or create a store there: agw admin user create --data ${dataDir} --email E`,
      'STORE_NOT_FOUND',
    );
  }
  if (process.stdout.isTTY || process.stderr.isTTY) process.stderr.write(`store: ${where}${fresh ? ' (new: created now)' : ''}\n`);
  let opened: Awaited<ReturnType<typeof openAndMigrate>>;
  try {
    opened = await openAndMigrate({ store: config.store, dataDir });
  } catch (e) {
    throw storeError(e);
  }
  const { db, report } = opened;
  try {
    const result = await fn(db, config, report);
    const out = result as Record<string, unknown>;
    if (opts.json) printJson(out);
    else if (human) human(result);
    else if (Array.isArray(out.items)) printItems(out.items as Record<string, unknown>[]);
    else printKv(Object.entries(out).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : (v as string)]));
  } finally {
    await db.close();
  }
}

function printItems(items: Record<string, unknown>[]): void {
  if (!items.length) {
    process.stdout.write('none\n');
    return;
  }
  const keys = Object.keys(items[0]);
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  printTable(
    keys.map((k) => k.replace(/([a-z])([A-Z])/g, '$1 $2').toUpperCase()),
    items.map((it) => keys.map((k) => cell(it[k]))),
  );
}
