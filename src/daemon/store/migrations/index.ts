import type { Db, Queryable } from '../db.js';
import { StoreOpenError } from '../errors.js';
import { SCHEMA_V1 } from './sqlite/v01-initial.js';
import { SCHEMA_V2_MARKETPLACE } from './sqlite/v02-marketplace.js';
import { SCHEMA_V4_SPEND } from './sqlite/v04-spend.js';
import { SCHEMA_V5_GATEWAY } from './sqlite/v05-gateway.js';
import { SCHEMA_V6_SPEND_ROLLUP } from './sqlite/v06-spend-rollup.js';
import { SCHEMA_V7_MONEY } from './sqlite/v07-money.js';
import { SCHEMA_V8_KEYS } from './sqlite/v08-keys.js';
import { SCHEMA_V9_REQUEST_LOG } from './sqlite/v09-request-log.js';
import { SCHEMA_V17_SKILL_TRUST } from './sqlite/v17-skill-trust.js';
import { SCHEMA_PG_V1 } from './postgres/v01-initial.js';
import { SCHEMA_PG_V2_MARKETPLACE } from './postgres/v02-marketplace.js';
import { SCHEMA_PG_V4_SPEND } from './postgres/v04-spend.js';
import { SCHEMA_PG_V5_GATEWAY } from './postgres/v05-gateway.js';
import { SCHEMA_PG_V6_SPEND_ROLLUP } from './postgres/v06-spend-rollup.js';
import { SCHEMA_PG_V7_MONEY } from './postgres/v07-money.js';
import { SCHEMA_PG_V8_KEYS } from './postgres/v08-keys.js';
import { SCHEMA_PG_V9_REQUEST_LOG } from './postgres/v09-request-log.js';
import { SCHEMA_PG_V10_BOOK } from './postgres/v10-book.js';
import { SCHEMA_PG_V11_BOOK } from './postgres/v11-book.js';
import { SCHEMA_PG_V12_BOOK } from './postgres/v12-book.js';
import { SCHEMA_PG_V13_USAGE_DEBIT } from './postgres/v13-usage-debit.js';
import { SCHEMA_PG_V14_USAGE_DEBIT_INDEX } from './postgres/v14-usage-debit-index.js';
import { SCHEMA_PG_V15_BOOK } from './postgres/v15-book.js';
import { SCHEMA_V16_TOKEN_CLASSES } from './sqlite/v16-token-classes.js';
import { SCHEMA_PG_V16_TOKEN_CLASSES } from './postgres/v16-token-classes.js';
import { SCHEMA_V20_PROVIDER_KEY_STATS } from './sqlite/v20-provider-key-stats.js';
import { SCHEMA_PG_V20_PROVIDER_KEY_STATS } from './postgres/v20-provider-key-stats.js';
import { SCHEMA_PG_V17_SKILL_TRUST } from './postgres/v17-skill-trust.js';
import { SCHEMA_V18_SKILL_VERSIONS } from './sqlite/v18-skill-versions.js';
import { SCHEMA_PG_V18_SKILL_VERSIONS } from './postgres/v18-skill-versions.js';
import { recomputeCurrentVersions } from '../skills.js';

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  /** The same change for PostgreSQL (migrations/postgres/vNN-*.ts): same tables, columns and indexes. */
  postgres: string;
  /** Data work SQL cannot do (both dialects), run after the SQL in the same transaction. */
  data?: (q: Queryable) => Promise<void>;
}

/** Ordered, append-only. Never edit a migration that has shipped: add the next one. */
export const MIGRATIONS: Migration[] = [
  { version: 1, name: 'initial schema', sqlite: SCHEMA_V1, postgres: SCHEMA_PG_V1 },
  { version: 2, name: 'marketplace owner indexes', sqlite: SCHEMA_V2_MARKETPLACE, postgres: SCHEMA_PG_V2_MARKETPLACE },
  { version: 4, name: 'spend covering indexes, login attempts', sqlite: SCHEMA_V4_SPEND, postgres: SCHEMA_PG_V4_SPEND },
  { version: 5, name: 'partial usage indexes for the gateway hot path', sqlite: SCHEMA_V5_GATEWAY, postgres: SCHEMA_PG_V5_GATEWAY },
  { version: 6, name: 'daily spend rollup', sqlite: SCHEMA_V6_SPEND_ROLLUP, postgres: SCHEMA_PG_V6_SPEND_ROLLUP },
  { version: 7, name: 'holds, leases, key spend, request log', sqlite: SCHEMA_V7_MONEY, postgres: SCHEMA_PG_V7_MONEY },
  { version: 8, name: 'keys with limits', sqlite: SCHEMA_V8_KEYS, postgres: SCHEMA_PG_V8_KEYS },
  { version: 9, name: 'request log indexes, bodies and retention', sqlite: SCHEMA_V9_REQUEST_LOG, postgres: SCHEMA_PG_V9_REQUEST_LOG },
  { version: 10, name: 'bookings without a per-row account check (PostgreSQL)', sqlite: '', postgres: SCHEMA_PG_V10_BOOK },
  { version: 11, name: 'bookings as an array of rows, not JSON (PostgreSQL)', sqlite: '', postgres: SCHEMA_PG_V11_BOOK },
  { version: 12, name: 'bookings with less work per batch (PostgreSQL)', sqlite: '', postgres: SCHEMA_PG_V12_BOOK },
  { version: 13, name: 'a call\'s wallet debit in its usage record (PostgreSQL)', sqlite: '', postgres: SCHEMA_PG_V13_USAGE_DEBIT },
  { version: 14, name: 'the index of the debits in usage records (PostgreSQL)', sqlite: '', postgres: SCHEMA_PG_V14_USAGE_DEBIT_INDEX },
  { version: 15, name: "bookings: a hot account's rollups without a join (PostgreSQL)", sqlite: '', postgres: SCHEMA_PG_V15_BOOK },
  { version: 16, name: 'token classes and dropped parameters in the request log', sqlite: SCHEMA_V16_TOKEN_CLASSES, postgres: SCHEMA_PG_V16_TOKEN_CLASSES },
  { version: 17, name: 'skill versions: digest, signature and scan findings; skill signing keys', sqlite: SCHEMA_V17_SKILL_TRUST, postgres: SCHEMA_PG_V17_SKILL_TRUST },
  {
    version: 18,
    name: 'skill versions: the owner\'s current version, versions installed per account, archived versions one by one',
    sqlite: SCHEMA_V18_SKILL_VERSIONS,
    postgres: SCHEMA_PG_V18_SKILL_VERSIONS,
    data: recomputeCurrentVersions,
  },
  // 19 is reserved for work in progress on another branch
  { version: 20, name: "provider keys' calls, failures and cooldowns", sqlite: SCHEMA_V20_PROVIDER_KEY_STATS, postgres: SCHEMA_PG_V20_PROVIDER_KEY_STATS },
];

export const SCHEMA_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));

export interface MigrationReport {
  applied: number[];
  current: number;
}

export class SchemaTooNewError extends StoreOpenError {
  constructor(readonly found: number) {
    super(
      'SCHEMA_TOO_NEW',
      `the store's schema is version ${found} but this agw only knows up to ${SCHEMA_VERSION}`,
      'a newer agw has migrated this store: upgrade agw before starting it on this store',
    );
  }
}

/** Any number: the key of the advisory lock that makes parallel daemons migrate one at a time. */
const MIGRATION_LOCK = 7_461_677;

/**
 * Applies every migration the store lacks, each in its own transaction, and reports
 * which. Safe to run twice and from several processes at once: on PostgreSQL each
 * transaction first takes a transaction-scoped advisory lock (SQLite's BEGIN IMMEDIATE
 * is already exclusive) and re-reads what is applied under it. Refuses a store whose
 * schema is newer than this code.
 */
export async function migrate(db: Db): Promise<MigrationReport> {
  const applied: number[] = [];
  let have = await locked(db, (q) => appliedVersions(q));
  const newest = Math.max(0, ...have);
  if (newest > SCHEMA_VERSION) throw new SchemaTooNewError(newest);
  for (const m of [...MIGRATIONS].sort((a, b) => a.version - b.version)) {
    if (have.has(m.version)) continue;
    const did = await locked(db, async (q) => {
      have = await appliedVersions(q);
      if (have.has(m.version)) return false;
      for (const stmt of splitStatements(db.dialect === 'postgres' ? m.postgres : m.sqlite)) await q.run(stmt);
      await m.data?.(q);
      await q.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, Date.now()]);
      return true;
    });
    if (did) applied.push(m.version);
  }
  return { applied, current: SCHEMA_VERSION };
}

function locked<T>(db: Db, fn: (q: Queryable) => Promise<T>): Promise<T> {
  return db.tx(async (q) => {
    if (q.dialect === 'postgres') {
      // an index on a big table may take longer than the pool's statement timeout
      await q.run('SET LOCAL statement_timeout = 0');
      await q.get(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    }
    await q.run(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)',
    );
    return fn(q);
  });
}

async function appliedVersions(q: Queryable): Promise<Set<number>> {
  const rows = await q.all<{ version: number }>('SELECT version FROM schema_migrations');
  return new Set(rows.map((r) => Number(r.version)));
}

/**
 * The statements of a migration script: split at a `;` ending a line, except inside a
 * dollar-quoted body ($fn$ … $fn$: PostgreSQL functions, whose bodies hold statements).
 */
export function splitStatements(sql: string): string[] {
  const out: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (const line of sql.split('\n')) {
    current += `${line}\n`;
    for (const m of line.matchAll(/\$[A-Za-z_]*\$/g)) {
      if (quote === null) quote = m[0];
      else if (m[0] === quote) quote = null;
    }
    if (quote === null && /;\s*$/.test(line)) {
      out.push(current);
      current = '';
    }
  }
  out.push(current);
  return out.map((s) => s.trim().replace(/;$/, '')).filter((s) => s.length > 0);
}
