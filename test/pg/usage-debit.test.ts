import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PgBatcher } from '../../src/daemon/money/postgres/batches.js';
import { bookingRecords, bookingTypeOid, encoderOf } from '../../src/daemon/money/postgres/booking-row.js';
import { BOOKING_V7_COLUMNS } from '../../src/daemon/store/migrations/postgres/v07-money.js';

/** A batch as a daemon of the previous version sends it (agw_booking_v7). */
const v7Records = encoderOf(BOOKING_V7_COLUMNS);
import { credit, getWalletRow, listTransactions } from '../../src/daemon/money/wallets.js';
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/daemon/store/migrations/index.js';
import { PgDb } from '../../src/daemon/store/postgres.js';
import type { AppContext } from '../../src/daemon/context/index.js';
import { pruneOnce } from '../../src/daemon/requests/retention.js';
import { batchRow, settledCall, withSessions } from '../helpers/bookings.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

/**
 * Migration 13 (PostgreSQL): a call's wallet debit is columns of its usage record, and
 * wallet_transactions a view over them and the other transactions. Taken on a store of
 * version 12 that holds transactions of both kinds the old way: the listing reads old and
 * new in one order, each balance following from the one before; writers insert through
 * the view; a batch sent as new that holds a stored booking writes nothing and is booked
 * once on its retry; an older daemon's agw_book_v11 books on the new schema; the request
 * log's retention keeps the debits; deleting an account deletes all of it.
 */
const USER = 'usr_debit';
const DAEMON = 'dmn_debit';
let tdb: TestDatabase;
let db: PgDb;
let seq = 0;

const call = (at: number, customerNano: number) => settledCall(`use_debit_${String(++seq).padStart(3, '0')}`, USER, at, customerNano);

const none = { wallet: false, quota: false, budgets: [] };
const count = async (sql: string, params: unknown[] = []) => Number((await db.get<{ n: number }>(sql, params))!.n);
const balance = async () => Number((await getWalletRow(db, USER))!.balance_nusd);

beforeAll(async () => {
  tdb = await createTestDatabase({ migrated: false });
  db = new PgDb(tdb.url);
  await db.run('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
  for (const m of MIGRATIONS.filter((x) => x.version < 13)) {
    await db.exec(m.postgres);
    await db.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [m.version, m.name, Date.now()]);
  }
  await db.run('INSERT INTO users (id, email, tier, created_at) VALUES (?, ?, ?, ?)', [USER, 'debit@example.com', 'pro', 1]);
  await db.run('INSERT INTO wallets (user_id, updated_at) VALUES (?, ?)', [USER, 1]);
  await db.run('INSERT INTO daemons (id, started_at, expires_at) VALUES (?, ?, ?)', [DAEMON, 0, Date.now() + 600_000]);
  // version 12's books: a credit, then a call whose debit is a row of wallet_transactions
  await db.tx((q) => credit(q, { userId: USER, amount: 10_000_000, type: 'credit' }));
  const old = call(Date.now() - 60_000, 1_000_000);
  await db.run(
    `INSERT INTO usage_records (id, user_id, usage_type, status, endpoint, provider_id, model, customer_cost_nusd, period_start, created_at, finalized_at)
     VALUES (?, ?, 'ai_chat', 'finalized', 'chat', 'openai', 'gpt-4o-mini', ?, ?, ?, ?)`,
    [old.id, USER, old.customerNano, old.periodKey, old.createdAt, old.settledAt],
  );
  await db.run(
    `INSERT INTO wallet_transactions (user_id, type, amount_nusd, balance_after_nusd, description, provider_id, model, usage_id, created_at)
     VALUES (?, 'usage', ?, ?, ?, 'openai', 'gpt-4o-mini', ?, ?)`,
    [USER, -old.customerNano, 9_000_000, old.description, old.id, old.settledAt],
  );
  await db.run('UPDATE wallets SET balance_nusd = 9000000 WHERE user_id = ?', [USER]);
  expect(await migrate(db)).toEqual({ applied: MIGRATIONS.map((m) => m.version).filter((v) => v >= 13), current: SCHEMA_VERSION });
});

afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe('migration 13: the usage debit in the usage record', () => {
  test('the listing reads the old transactions and the new in one order, each balance following from the one before', async () => {
    const batcher = new PgBatcher(db, console, () => undefined);
    const now = Date.now();
    await Promise.all([call(now, 700_000), call(now + 1, 300_000)].map((b) => batcher.push(b, none, DAEMON)));
    await db.tx((q) => credit(q, { userId: USER, amount: 5_000_000, type: 'credit', description: 'top-up' })); // through the view
    await batcher.push(call(now + 2, 2_000_000), none, DAEMON);

    const items = await listTransactions(db, USER, 50);
    expect(items.map((t) => [t.type, Number(t.amount_nusd)])).toEqual([
      ['usage', -2_000_000],
      ['credit', 5_000_000],
      ['usage', -300_000],
      ['usage', -700_000],
      ['usage', -1_000_000], // booked by version 12, a row of its own
      ['credit', 10_000_000],
    ]);
    const ids = items.map((t) => Number(t.id));
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 0; i < items.length - 1; i++) {
      expect(Number(items[i].balance_after_nusd)).toBe(Number(items[i + 1].balance_after_nusd) + Number(items[i].amount_nusd));
    }
    expect(Number(items[0].balance_after_nusd)).toBe(await balance());
    expect(await balance()).toBe(9_000_000 - 1_000_000 + 5_000_000 - 2_000_000);
    expect(items[0].description).toBe(`call use_debit_${String(seq).padStart(3, '0')}`);
    expect(items[0].created_at).toBe(now + 2);
    // pages of two, by cursor, are the same list
    const paged: typeof items = [];
    for (let cursor: number | undefined; ; ) {
      const page = await listTransactions(db, USER, 2, cursor);
      paged.push(...page);
      if (page.length < 2) break;
      cursor = Number(page[page.length - 1].id);
    }
    expect(paged).toEqual(items);
    // the new debits are columns of their records, not rows of wallet_entries
    expect(await count("SELECT count(*) AS n FROM wallet_entries WHERE type = 'usage'")).toBe(1);
    expect(await count('SELECT count(*) AS n FROM usage_records WHERE tx_id IS NOT NULL')).toBe(3);
  });

  test('a batch sent as new that holds a stored booking writes nothing; the daemon retries it looking, and books the rest once', async () => {
    const stored = (await db.get<{ id: string }>('SELECT id FROM usage_records WHERE tx_id IS NOT NULL ORDER BY id LIMIT 1'))!.id;
    const now = Date.now();
    const again = { ...call(now, 700_000), id: stored };
    const fresh = call(now + 1, 400_000);
    const before = { balance: await balance(), records: await count('SELECT count(*) AS n FROM usage_records') };
    const rows = [again, fresh].map((b, ord) => batchRow(b, ord));
    const oid = await bookingTypeOid(db);
    await expect(db.get('SELECT agw_book_v16(?, ?::agw_booking_v16[], NULL, false) AS n', [DAEMON, bookingRecords(rows, oid)])).rejects.toMatchObject({ code: '23505', constraint: 'usage_records_pkey' });
    expect({ balance: await balance(), records: await count('SELECT count(*) AS n FROM usage_records') }).toEqual(before);

    const batcher = new PgBatcher(db, console, () => undefined);
    await Promise.all([again, fresh].map((b) => batcher.push(b, none, DAEMON)));
    expect(batcher.stats).toMatchObject({ batches: 1, bookings: 2, retries: 0 });
    expect(await balance()).toBe(before.balance - 400_000);
    expect(await count('SELECT count(*) AS n FROM wallet_transactions WHERE usage_id = ?', [stored])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM wallet_transactions WHERE usage_id = ?', [fresh.id])).toBe(1);
  });

  test.each([
    ['agw_book_v16', 'AGW02', 'SELECT agw_book_v16($1, $2::agw_booking_v16[], NULL, true) AS n', 'agw_booking_v16'],
    ['agw_book_v13', 'AGW02', 'SELECT agw_book_v13($1, $2::agw_booking_v7[], NULL, true) AS n', 'agw_booking_v7'],
    // a daemon of two versions back does not know AGW02: its function skips the booking, as it did
    ['agw_book_v11', 0, 'SELECT agw_book_v11($1, $2::agw_booking_v7[]) AS n', 'agw_booking_v7'],
  ])('a booking another transaction writes while the batch looks (a retry racing its first try), %s answers %s, nothing written', async (_name, outcome, sql, type) => {
    const b = call(Date.now(), 123_000);
    const rows = [batchRow(b, 0)];
    const batch = type === 'agw_booking_v7' ? v7Records(rows, await bookingTypeOid(db, type)) : bookingRecords(rows, await bookingTypeOid(db));
    const before = await balance();
    await withSessions(tdb.url, 2, async ([other, looking]) => {
      await other.query('BEGIN');
      await other.query(
        "INSERT INTO usage_records (id, user_id, usage_type, status, endpoint, provider_id, period_start, created_at) VALUES ($1, $2, 'ai_chat', 'reserved', 'chat', 'openai', 'p', 1)",
        [b.id, USER],
      );
      // the batch looks (not there yet: uncommitted), then its insert waits for the other transaction
      const booking = looking.query(sql, [DAEMON, batch]).then(
        (r) => Number(r.rows[0].n),
        (e: { code?: string }) => e.code,
      );
      await new Promise((r) => setTimeout(r, 300));
      await other.query('COMMIT');
      expect(await booking).toBe(outcome);
    });
    expect(await balance()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM wallet_transactions WHERE usage_id = ?', [b.id])).toBe(0);
  });

  test('a batch that does not come in the order of its calls is refused, and writes nothing', async () => {
    const calls = [call(Date.now(), 10_000), call(Date.now(), 20_000)];
    const rows = calls.map((b, i) => batchRow(b, 1 - i));
    const before = await balance();
    await expect(db.get('SELECT agw_book_v16(?, ?::agw_booking_v16[], NULL, false) AS n', [DAEMON, bookingRecords(rows, await bookingTypeOid(db))])).rejects.toMatchObject({ code: '22023' });
    expect(await balance()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM usage_records WHERE id = ANY (?)', [calls.map((c) => c.id)])).toBe(0);
  });

  test("an older daemon's agw_book_v11 books on the new schema, and its batch booked again writes nothing", async () => {
    const b = call(Date.now(), 250_000);
    const rows = [batchRow(b, 0)];
    const batch = v7Records(rows, await bookingTypeOid(db, 'agw_booking_v7'));
    const before = await balance();
    expect(Number((await db.get<{ n: number }>('SELECT agw_book_v11(?, ?::agw_booking_v7[]) AS n', [DAEMON, batch]))!.n)).toBe(1);
    expect(Number((await db.get<{ n: number }>('SELECT agw_book_v11(?, ?::agw_booking_v7[]) AS n', [DAEMON, batch]))!.n)).toBe(0);
    expect(await balance()).toBe(before - 250_000);
    expect(await count('SELECT count(*) AS n FROM wallet_transactions WHERE usage_id = ?', [b.id])).toBe(1);
  });

  test("a page of a heavy user's listing reads a page of rows, not all of the user's debits", async () => {
    await db.run(
      `INSERT INTO usage_records (id, user_id, usage_type, status, endpoint, provider_id, period_start, created_at, finalized_at,
         tx_id, tx_amount_nusd, tx_allowance_nusd, tx_balance_after_nusd)
       SELECT 'use_heavy_' || g, ?, 'ai_chat', 'finalized', 'chat', 'openai', 'p', g, g, nextval('wallet_transactions_id_seq'), -1, 0, g
         FROM generate_series(1, 20000) g`,
      [USER],
    );
    await db.run('ANALYZE usage_records');
    const read = async (sql: string, params: unknown[]) => {
      const [row] = await db.all<{ 'QUERY PLAN': { Plan: Plan }[] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
      const rows = (p: Plan): number => (p['Node Type'].includes('Scan') ? p['Actual Rows'] : 0) + (p.Plans ?? []).reduce((n, c) => n + rows(c), 0);
      return rows(row['QUERY PLAN'][0].Plan);
    };
    const first = await listTransactions(db, USER, 50);
    expect(first).toHaveLength(50);
    expect(await read('SELECT * FROM wallet_transactions WHERE user_id = ? ORDER BY id DESC LIMIT ?', [USER, 50])).toBeLessThanOrEqual(60);
    expect(await read('SELECT * FROM wallet_transactions WHERE user_id = ? AND id < ? ORDER BY id DESC LIMIT ?', [USER, Number(first[49].id), 50])).toBeLessThanOrEqual(60);
  });

  test("the request log's retention deletes records, not the debits they carry: the listing reads the same", async () => {
    const before = await listTransactions(db, USER, 100_000);
    const ctx = { db, config: { logs: { retentionDays: 1, bodiesRetentionDays: 1 } }, log: { info() {}, error() {} } } as unknown as AppContext;
    const report = await pruneOnce(ctx, Date.now() + 3 * 86_400_000);
    expect(report.records).toBeGreaterThan(20_000);
    expect(await count('SELECT count(*) AS n FROM usage_records WHERE user_id = ?', [USER])).toBe(0);
    expect(await listTransactions(db, USER, 100_000)).toEqual(before);
  });

  test('a call booked again after the retention pruned its record (a spooled call replayed late) is not debited twice', async () => {
    const ctx = { db, config: { logs: { retentionDays: 30, bodiesRetentionDays: 30 } }, log: { info() {}, error() {} } } as unknown as AppContext;
    const old = call(Date.now() - 40 * 86_400_000, 321_000);
    await new PgBatcher(db, console, () => undefined).push(old, none, DAEMON);
    const before = await balance();
    expect((await pruneOnce(ctx)).records).toBe(1);
    const again = new PgBatcher(db, console, () => undefined);
    await again.push(old, none, DAEMON); // a first try: the batch looks, for its call is that old
    expect(await balance()).toBe(before);
    expect(await count('SELECT count(*) AS n FROM wallet_transactions WHERE usage_id = ?', [old.id])).toBe(1);
    expect(await count('SELECT count(*) AS n FROM usage_records WHERE id = ?', [old.id])).toBe(0);
    await expect(pruneOnce(ctx)).resolves.toMatchObject({ records: 0 });
  });

  test('deleting the account deletes its transactions of both kinds and its records', async () => {
    await db.run('DELETE FROM users WHERE id = ?', [USER]);
    expect(await count('SELECT count(*) AS n FROM wallet_transactions WHERE user_id = ?', [USER])).toBe(0);
    expect(await count('SELECT count(*) AS n FROM usage_records WHERE user_id = ?', [USER])).toBe(0);
  });
});

interface Plan {
  'Node Type': string;
  'Actual Rows': number;
  Plans?: Plan[];
}
