import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PgDb } from '../../src/daemon/store/postgres.js';
import { openAndMigrate } from '../../src/daemon/store/open.js';
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/daemon/store/migrations/index.js';
import type { Db } from '../../src/daemon/store/db.js';
import { createUser, userByEmail } from '../../src/daemon/store/users.js';
import { credit, debit, getWalletRow, listTransactions } from '../../src/daemon/money/wallets.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { PG_BOOK_FUNCTION } from '../../src/daemon/money/postgres/book.js';
import { AGW_BOOK_V13 } from '../../src/daemon/store/migrations/postgres/agw-book-v13.js';

/**
 * The PostgreSQL store on its own: migrations (once, in parallel, refused when too new),
 * value types, transactions and the row lock in debit. That both dialects build the same
 * schema is src/daemon/store/migrations/parity.test.ts.
 */
let tdb: TestDatabase;
let db: Db;

beforeAll(async () => {
  tdb = await createTestDatabase({ migrated: false });
  db = (await openAndMigrate({ store: tdb.url, dataDir: '/nonexistent' })).db;
});

afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe('PostgreSQL store', () => {
  test('migrations apply once: a second open applies nothing, three parallel opens of a fresh database apply each version once', async () => {
    expect((await migrate(db)).applied).toEqual([]);
    const fresh = await createTestDatabase({ migrated: false });
    try {
      const opened = await Promise.all([0, 1, 2].map(() => openAndMigrate({ store: fresh.url, dataDir: '/nonexistent' })));
      const applied = opened.flatMap((o) => o.report.applied).sort((a, b) => a - b);
      expect(applied).toEqual(MIGRATIONS.map((m) => m.version).sort((a, b) => a - b));
      expect(opened.every((o) => o.report.current === SCHEMA_VERSION)).toBe(true);
      const rows = await opened[0].db.all<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((r) => r.version)).toEqual(applied);
      await Promise.all(opened.map((o) => o.db.close()));
    } finally {
      await fresh.drop();
    }
  });

  test('a schema newer than the code is refused with SCHEMA_TOO_NEW', async () => {
    const fresh = await createTestDatabase();
    try {
      const { db: d } = await openAndMigrate({ store: fresh.url, dataDir: '/nonexistent' });
      await d.run('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)', [SCHEMA_VERSION + 1, 'future', Date.now()]);
      await d.close();
      await expect(openAndMigrate({ store: fresh.url, dataDir: '/nonexistent' })).rejects.toMatchObject({
        code: 'SCHEMA_TOO_NEW',
        message: expect.stringContaining(`version ${SCHEMA_VERSION + 1}`),
      });
    } finally {
      await fresh.drop();
    }
  });

  test("the booking function a store runs is the code's: a store migrated before gets its text from the migration that ships it", async () => {
    // a change to agw_book_v16's text ships as a migration of its own (CREATE OR REPLACE), or a
    // store migrated before keeps the old body: this hash names the text the newest migration
    // that installs it ships. Changed the function? Add a migration that installs it (see
    // migrations/postgres/v16-token-classes.ts) and put its hash here
    const shipping = MIGRATIONS.filter((m) => m.postgres.includes(PG_BOOK_FUNCTION)).map((m) => m.version);
    expect(Math.max(...shipping)).toBe(16);
    expect(createHash('sha256').update(PG_BOOK_FUNCTION).digest('hex').slice(0, 16)).toBe('9c58e2fdc23e791d');
    // agw_book_v13 as migrations 13 and 15 shipped it, frozen for daemons of the previous version
    expect(createHash('sha256').update(AGW_BOOK_V13).digest('hex').slice(0, 16)).toBe('e98668e27d4823b0');
    const fresh = await createTestDatabase();
    const store = (await openAndMigrate({ store: fresh.url, dataDir: '/nonexistent' })).db;
    try {
      const body = async () => (await store.get<{ src: string }>("SELECT prosrc AS src FROM pg_proc WHERE proname = 'agw_book_v16'"))?.src;
      const shipped = await body();
      expect(PG_BOOK_FUNCTION).toContain(shipped);
      // the store as a migration before 16 left it: no agw_book_v16, no agw_booking_v16, no new columns
      await store.run('DROP FUNCTION agw_book_v16');
      await store.run('DROP TYPE agw_booking_v16');
      await store.run('ALTER TABLE usage_records DROP COLUMN cache_write_tokens, DROP COLUMN reasoning_tokens, DROP COLUMN dropped_params');
      await store.run('DELETE FROM schema_migrations WHERE version = 16');
      expect(await migrate(store)).toEqual({ applied: [16], current: SCHEMA_VERSION });
      expect(await body()).toBe(shipped);
    } finally {
      await store.close();
      await fresh.drop();
    }
  });

  test('an unreachable server is STORE_UNAVAILABLE within the connect timeout, naming host and database but not the password', async () => {
    const t0 = Date.now();
    const err = await openAndMigrate({ store: 'postgres://agw:hunter2@127.0.0.1:1/agw?connect_timeout=2', dataDir: '/x' }).catch((e) => e);
    expect(err).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(err.message).toContain('127.0.0.1:1/agw');
    expect(err.message).not.toContain('hunter2');
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  test('integers, sums and counts come back as numbers; bytes round-trip; email lookups ignore case', async () => {
    const u = await db.tx((q) => createUser(q, { email: 'Ada.Lovelace@Example.com', tier: 'pro' }));
    await db.tx((q) => credit(q, { userId: u.id, amount: 12_345_678_901_234, type: 'credit' }));
    const w = await getWalletRow(db, u.id);
    expect(w?.balance_nusd).toBe(12_345_678_901_234);
    const agg = await db.get<{ n: number; s: number }>('SELECT COUNT(*) AS n, SUM(amount_nusd) AS s FROM wallet_transactions WHERE user_id = ?', [u.id]);
    expect(agg).toEqual({ n: 1, s: 12_345_678_901_234 });
    expect((await userByEmail(db, 'ada.lovelace@example.COM'))?.id).toBe(u.id);
    await expect(db.tx((q) => createUser(q, { email: 'ADA.LOVELACE@example.com', tier: 'free' }))).rejects.toMatchObject({ code: '23505' });
    const bytes = Buffer.from([0, 1, 2, 255, 254]);
    await db.run('INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?)', ['x'.repeat(64), bytes.length, bytes]);
    const back = await db.get<{ data: Buffer; size: number }>('SELECT data, size FROM blobs WHERE sha256 = ?', ['x'.repeat(64)]);
    expect(Buffer.compare(back!.data, bytes)).toBe(0);
    expect(back!.size).toBe(5);
  });

  test('a failing transaction leaves nothing behind', async () => {
    const before = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM users');
    await expect(
      db.tx(async (q) => {
        await createUser(q, { email: 'gone@example.com', tier: 'free' });
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await db.get('SELECT COUNT(*) AS n FROM users')).toEqual(before);
  });

  test('a deadlock between two daemons is retried, and both transactions commit', async () => {
    const other = new PgDb(tdb.url);
    try {
      const a = await db.tx((q) => createUser(q, { email: 'dl-a@example.com', tier: 'free' }));
      const b = await db.tx((q) => createUser(q, { email: 'dl-b@example.com', tier: 'free' }));
      let attempts = 0;
      let bothLocked!: () => void;
      const gate = new Promise<void>((r) => (bothLocked = r));
      let locked = 0;
      const lockBoth = (d: Db, first: string, second: string) =>
        d.tx(async (q) => {
          attempts++;
          await q.run('UPDATE wallets SET updated_at = updated_at + 1 WHERE user_id = ?', [first]);
          if (++locked === 2) bothLocked();
          await Promise.race([gate, new Promise((r) => setTimeout(r, 200))]);
          await q.run('UPDATE wallets SET updated_at = updated_at + 1 WHERE user_id = ?', [second]);
        });
      await Promise.all([lockBoth(db, a.id, b.id), lockBoth(other, b.id, a.id)]);
      expect(attempts).toBeGreaterThanOrEqual(3); // one of the two ran again after the deadlock
      const rows = await db.all<{ updated_at: number }>('SELECT updated_at FROM wallets WHERE user_id IN (?, ?)', [a.id, b.id]);
      const created = await db.all<{ created_at: number }>('SELECT created_at FROM users WHERE id IN (?, ?)', [a.id, b.id]);
      expect(rows.reduce((s, r) => s + r.updated_at, 0) - created.reduce((s, r) => s + r.created_at, 0)).toBe(4);
    } finally {
      await other.close();
    }
  });

  test('parallel debits through three pools lose no update: allowance and balance add up to the transactions', async () => {
    const pools = [db, new PgDb(tdb.url), new PgDb(tdb.url)];
    try {
      const u = await db.tx((q) => createUser(q, { email: 'spender@example.com', tier: 'pro' }));
      await db.tx((q) => credit(q, { userId: u.id, amount: 1_000_000_000, type: 'credit' }));
      const allowance = 500_000_000; // 0.5 USD this month, then the balance
      const amount = 30_000_000;
      await Promise.all(
        Array.from({ length: 45 }, (_, i) =>
          pools[i % 3].tx((q) => debit(q, { userId: u.id, amount, monthlyAllowance: allowance, type: 'usage' })),
        ),
      );
      const w = (await getWalletRow(db, u.id))!;
      const total = 45 * amount; // 1.35 USD: 0.5 from the allowance, 0.85 from the balance
      expect(w.allowance_used_nusd).toBe(allowance);
      expect(w.balance_nusd).toBe(1_000_000_000 - (total - allowance));
      const txs = await listTransactions(db, u.id, 100);
      const debits = txs.filter((t) => t.type === 'usage');
      expect(debits).toHaveLength(45);
      expect(debits.reduce((s, t) => s - t.amount_nusd, 0)).toBe(total);
      expect(Math.min(...debits.map((t) => t.balance_after_nusd))).toBe(w.balance_nusd);
    } finally {
      await Promise.all(pools.slice(1).map((p) => p.close()));
    }
  });
});
