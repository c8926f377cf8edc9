import { describe, expect, test } from 'vitest';
import { SqliteDb } from '../sqlite.js';
import { openAndMigrate } from '../open.js';
import { MIGRATIONS, migrate } from './index.js';
import type { Db } from '../db.js';
import { createTestDatabase } from '../../../../test/helpers/pg.js';

/**
 * The two dialects of every migration side by side: sqlite/vNN-*.ts and postgres/vNN-*.ts
 * must build the same tables, columns and indexes. Needs the test PostgreSQL (AGW_TEST_PG,
 * default 127.0.0.1:5432); runs in the `other` project.
 */
type Col = { table: string; column: string; kind: string; notnull: boolean };

async function sqliteSchema(): Promise<{ cols: Col[]; indexes: string[] }> {
  const s = new SqliteDb(':memory:');
  await migrate(s);
  const kinds: Record<string, string> = { INTEGER: 'int', BIGINT: 'int', TEXT: 'text', REAL: 'real', BLOB: 'bytes' };
  const cols = await s.all<{ table: string; column: string; type: string; notnull: number; pk: number }>(
    `SELECT m.name AS "table", c.name AS "column", c.type AS type, c."notnull" AS "notnull", c.pk AS pk
       FROM sqlite_master m, pragma_table_info(m.name) c WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`,
  );
  const idx = await s.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'");
  await s.close();
  return {
    cols: cols.map((c) => ({ table: c.table, column: c.column, kind: kinds[c.type] ?? c.type, notnull: c.notnull === 1 || c.pk > 0 })),
    indexes: idx.map((i) => i.name),
  };
}

async function pgSchema(db: Db): Promise<{ cols: Col[]; indexes: string[] }> {
  const kinds: Record<string, string> = { bigint: 'int', integer: 'int', text: 'text', citext: 'text', 'double precision': 'real', bytea: 'bytes' };
  const cols = await db.all<{ table: string; column: string; type: string; udt: string; nullable: string }>(
    `SELECT table_name AS "table", column_name AS "column", data_type AS type, udt_name AS udt, is_nullable AS nullable
       FROM information_schema.columns WHERE table_schema = current_schema()`,
  );
  const idx = await db.all<{ name: string }>(
    `SELECT i.relname AS name FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
      WHERE n.nspname = current_schema() AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
  );
  return {
    cols: cols.map((c) => ({
      table: c.table,
      column: c.column,
      kind: kinds[c.type] ?? kinds[c.udt] ?? c.type,
      notnull: c.nullable === 'NO',
    })),
    indexes: idx.map((i) => i.name),
  };
}

const byKey = (a: Col, b: Col) => `${a.table}.${a.column}`.localeCompare(`${b.table}.${b.column}`);

describe('the migrations of both dialects', () => {
  test('every migration has a PostgreSQL twin and both dialects build the same tables, columns and indexes', async () => {
    for (const m of MIGRATIONS) expect(m.postgres.trim(), `migration ${m.version}`).not.toBe('');
    // an empty database that every PostgreSQL migration runs on, as `agw serve` would
    const fresh = await createTestDatabase({ migrated: false });
    const { db } = await openAndMigrate({ store: fresh.url, dataDir: '/nonexistent' });
    const [lite, pg] = await Promise.all([sqliteSchema(), pgSchema(db)]).finally(async () => {
      await db.close();
      await fresh.drop();
    });
    // PostgreSQL's one difference (migration 13): a call's wallet debit is columns of its usage
    // record, wallet_transactions a view with SQLite's columns over them and the other
    // transactions (the table wallet_entries, SQLite's wallet_transactions renamed)
    const shape = (cols: Col[], table: string) => cols.filter((c) => c.table === table).map((c) => `${c.column}:${c.kind}`).sort();
    expect(shape(pg.cols, 'wallet_transactions')).toEqual(shape(lite.cols, 'wallet_transactions'));
    const debit = pg.cols.filter((c) => c.table === 'usage_records' && c.column.startsWith('tx_'));
    expect(debit.map((c) => c.column).sort()).toEqual(['tx_allowance_nusd', 'tx_amount_nusd', 'tx_balance_after_nusd', 'tx_description', 'tx_id']);
    const twin = pg.cols
      .filter((c) => c.table !== 'wallet_transactions' && !debit.includes(c))
      .map((c) => (c.table === 'wallet_entries' ? { ...c, table: 'wallet_transactions' } : c));
    expect(twin.sort(byKey)).toEqual(lite.cols.sort(byKey));
    expect(pg.indexes.filter((i) => i !== 'usage_wallet_tx').sort()).toEqual(lite.indexes.sort());
  });
});
