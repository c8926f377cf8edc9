import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PgBatcher } from '../../src/daemon/money/postgres/batches.js';
import { bookingRecords, bookingTypeOid } from '../../src/daemon/money/postgres/booking-row.js';
import { potNames } from '../../src/daemon/money/postgres/pots.js';
import { quotaPeriod } from '../../src/daemon/money/quotas.js';
import { openAndMigrate } from '../../src/daemon/store/open.js';
import type { PgDb } from '../../src/daemon/store/postgres.js';
import { batchRow, settledCall, withSessions } from '../helpers/bookings.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

/**
 * What a batch takes off the daemon's slices (agw_book_v16): each pot's lease row loses what
 * the calls admitted against it consumed, at most what it holds, and the pot's own `leased`
 * column loses the same. A batch of one account is written with plain statements, a batch
 * of several with one statement per kind of pot: both are held to the same figures here,
 * with a slice that covers its calls, one that is smaller than they consumed, and a call
 * marked as admitted against a slice whose lease row is gone.
 */
const DAEMON = 'dmn_slices';
const NOW = Date.UTC(2026, 10, 20, 12);
const PERIOD = quotaPeriod(NOW).key;
const BUDGET = 'M2026-11';
const SLICE = { wallet: 1_000_000, quota: 10, budget: 1_000_000 };
let tdb: TestDatabase;
let db: PgDb;
let seq = 0;

interface Account {
  id: string;
  key: string;
  /** what this daemon's lease rows hold of each pot (null: no lease row) */
  slices: { wallet: number | null; quota: number | null; budget: number | null };
}

async function account(name: string, slices: Account['slices']): Promise<Account> {
  const a = { id: `usr_sl_${name}`, key: `key_sl_${name}`, slices };
  await db.run("INSERT INTO users (id, email, tier, created_at) VALUES (?, ?, 'pro', 1)", [a.id, `${a.id}@example.com`]);
  await db.run("INSERT INTO api_keys (id, user_id, name, lookup, hash, created_at) VALUES (?, ?, 'k', ?, 'h', 1)", [a.key, a.id, a.key]);
  // the pots' leased columns as the lease engine left them: what every daemon holds, here SLICE
  await db.run('INSERT INTO wallets (user_id, balance_nusd, leased_nusd, updated_at) VALUES (?, ?, ?, 1)', [a.id, 10_000_000_000, SLICE.wallet]);
  await db.run("INSERT INTO quota_counters (user_id, usage_type, period_start, used, leased) VALUES (?, 'ai_chat', ?, 0, ?)", [a.id, PERIOD, SLICE.quota]);
  await db.run('INSERT INTO key_spend (key_id, period, spent_nusd, leased_nusd) VALUES (?, ?, 0, ?)', [a.key, BUDGET, SLICE.budget]);
  const rows: [string, number | null][] = [
    [potNames.wallet(a.id), slices.wallet],
    [potNames.quota(a.id, 'ai_chat', PERIOD), slices.quota],
    [potNames.budget(a.key, BUDGET), slices.budget],
  ];
  for (const [pot, amount] of rows) {
    if (amount !== null) await db.run('INSERT INTO leases (pot, daemon_id, amount) VALUES (?, ?, ?)', [pot, DAEMON, amount]);
  }
  return a;
}

/** A call of account `a` (its key's budget counts it), settled at NOW. */
const call = (a: Account, customerNano: number) =>
  settledCall(`use_sl_${String(++seq).padStart(3, '0')}`, a.id, NOW, customerNano, { keyId: a.key, periodKey: PERIOD, budgets: [{ keyId: a.key, period: BUDGET }] });

/** Each pot of the account: its lease row's amount (null: none) and its own leased/used figures. */
async function pots(a: Account) {
  const lease = async (pot: string) => {
    const r = await db.get<{ amount: number }>('SELECT amount FROM leases WHERE pot = ? AND daemon_id = ?', [pot, DAEMON]);
    return r ? Number(r.amount) : null;
  };
  const w = (await db.get<{ leased_nusd: number; balance_nusd: number }>('SELECT leased_nusd, balance_nusd FROM wallets WHERE user_id = ?', [a.id]))!;
  const q = (await db.get<{ leased: number; used: number }>("SELECT leased, used FROM quota_counters WHERE user_id = ? AND usage_type = 'ai_chat' AND period_start = ?", [a.id, PERIOD]))!;
  const k = (await db.get<{ leased_nusd: number; spent_nusd: number }>('SELECT leased_nusd, spent_nusd FROM key_spend WHERE key_id = ? AND period = ?', [a.key, BUDGET]))!;
  return {
    wallet: { lease: await lease(potNames.wallet(a.id)), leased: Number(w.leased_nusd), balance: Number(w.balance_nusd) },
    quota: { lease: await lease(potNames.quota(a.id, 'ai_chat', PERIOD)), leased: Number(q.leased), used: Number(q.used) },
    budget: { lease: await lease(potNames.budget(a.key, BUDGET)), leased: Number(k.leased_nusd), spent: Number(k.spent_nusd) },
  };
}

/** What the batch should leave: each slice less what its calls consumed, at most what it held. */
function expected(a: Account, calls: number, spent: number, before: Awaited<ReturnType<typeof pots>>) {
  const taken = (slice: number | null, n: number) => Math.min(slice ?? 0, n);
  const w = taken(before.wallet.lease, spent);
  const q = taken(before.quota.lease, calls);
  const b = taken(before.budget.lease, spent);
  return {
    wallet: { lease: before.wallet.lease === null ? null : before.wallet.lease - w, leased: Math.max(0, before.wallet.leased - w), balance: before.wallet.balance - spent },
    quota: { lease: before.quota.lease === null ? null : before.quota.lease - q, leased: Math.max(0, before.quota.leased - q), used: before.quota.used + calls },
    budget: { lease: before.budget.lease === null ? null : before.budget.lease - b, leased: Math.max(0, before.budget.leased - b), spent: before.budget.spent + spent },
  };
}

const consumed = (a: Account) => ({ wallet: true, quota: true, budgets: [potNames.budget(a.key, BUDGET)] });

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = (await openAndMigrate({ store: tdb.url, dataDir: '/nonexistent' })).db as PgDb;
  await db.run('INSERT INTO daemons (id, started_at, expires_at) VALUES (?, ?, ?)', [DAEMON, 0, Date.now() + 600_000]);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe('a batch takes what its calls consumed off the daemon slices they were admitted against', () => {
  test('several accounts in one batch: a slice that covers its calls, one smaller than they consumed, one whose lease row is gone', async () => {
    const covered = await account('covered', { wallet: SLICE.wallet, quota: SLICE.quota, budget: SLICE.budget });
    const short = await account('short', { wallet: 300_000, quota: 1, budget: 200_000 });
    const gone = await account('gone', { wallet: null, quota: null, budget: null });
    const plan: [Account, number[]][] = [
      [covered, [200_000, 150_000]],
      [short, [250_000, 250_000]],
      [gone, [100_000]],
    ];
    const before = new Map(await Promise.all(plan.map(async ([a]) => [a.id, await pots(a)] as const)));
    const batcher = new PgBatcher(db, console, () => undefined);
    // interleaved, so the accounts' calls are not in order in the batch
    const calls = [call(covered, 200_000), call(short, 250_000), call(gone, 100_000), call(covered, 150_000), call(short, 250_000)];
    await Promise.all(calls.map((b) => batcher.push(b, consumed(plan.find(([a]) => a.id === b.userId)![0]), DAEMON)));
    expect(batcher.stats.batches).toBe(1);
    for (const [a, spent] of plan) {
      expect(await pots(a), a.id).toEqual(expected(a, spent.length, spent.reduce((x, y) => x + y, 0), before.get(a.id)!));
    }
    // the short slices are used up, not overdrawn
    expect((await pots(short)).wallet.lease).toBe(0);
    expect((await pots(short)).quota.lease).toBe(0);
  });

  test('one account in a batch: the same figures, written with plain statements', async () => {
    // a wallet slice smaller than the calls consumed (it is read, then taken), then one that covers them (taken at once)
    for (const [name, slice] of [['solo', 120_000], ['solo_covered', SLICE.wallet]] as const) {
      const solo = await account(name, { wallet: slice, quota: SLICE.quota, budget: SLICE.budget });
      const before = await pots(solo);
      const batcher = new PgBatcher(db, console, () => undefined);
      await Promise.all([call(solo, 100_000), call(solo, 50_000)].map((b) => batcher.push(b, consumed(solo), DAEMON)));
      expect(batcher.stats.batches).toBe(1);
      expect(await pots(solo)).toEqual(expected(solo, 2, 150_000, before));
      expect((await pots(solo)).wallet.lease).toBe(Math.max(0, slice - 150_000));
    }
  });

  test('calls not admitted against a slice take nothing off one', async () => {
    const free = await account('free', { wallet: SLICE.wallet, quota: SLICE.quota, budget: SLICE.budget });
    const other = await account('other', { wallet: SLICE.wallet, quota: SLICE.quota, budget: SLICE.budget });
    const before = await pots(free);
    const batcher = new PgBatcher(db, console, () => undefined);
    const none = { wallet: false, quota: false, budgets: [] };
    await Promise.all([call(free, 100_000), call(other, 100_000)].map((b) => batcher.push(b, none, DAEMON)));
    const after = await pots(free);
    expect(after.wallet).toEqual({ ...before.wallet, balance: before.wallet.balance - 100_000 });
    expect(after.quota).toEqual({ ...before.quota, used: before.quota.used + 1 });
    expect(after.budget).toEqual({ ...before.budget, spent: before.budget.spent + 100_000 });
  });
});

describe('lock order', () => {
  test("a batch with one counter taken from a slice and one not locks both in pot order: another daemon's return does not deadlock with it", async () => {
    const a = await account('mixed', { wallet: null, quota: null, budget: null });
    const other = 'dmn_slices_other';
    const [chat, image] = [potNames.quota(a.id, 'ai_chat', PERIOD), potNames.quota(a.id, 'ai_image', PERIOD)];
    await db.run('INSERT INTO daemons (id, started_at, expires_at) VALUES (?, ?, ?)', [other, 0, Date.now() + 600_000]);
    await db.run("INSERT INTO quota_counters (user_id, usage_type, period_start, used, leased) VALUES (?, 'ai_image', ?, 0, 15)", [a.id, PERIOD]);
    await db.run('UPDATE quota_counters SET leased = 5 WHERE user_id = ? AND usage_type = ?', [a.id, 'ai_chat']);
    await db.run('INSERT INTO leases (pot, daemon_id, amount) VALUES (?, ?, 5), (?, ?, 5), (?, ?, 10)', [chat, other, image, other, image, DAEMON]);
    // this daemon's batch: an ai_chat call admitted without a slice, an ai_image call against its slice
    const rows = [call(a, 1000), call(a, 1000)].map((b, ord) => batchRow({ ...b, usageType: ord ? 'ai_image' : 'ai_chat', budgets: [] }, ord, { quota: ord === 1 }));
    const batch = bookingRecords(rows, await bookingTypeOid(db));
    const deadlocks = async () => Number((await db.get<{ n: number }>('SELECT deadlocks AS n FROM pg_stat_database WHERE datname = current_database()'))!.n);
    const before = await deadlocks();
    await withSessions(tdb.url, 2, async ([returning, booking]) => {
      // the other daemon gives back part of its ai_chat slice (pot row, then lease row), and holds them
      await returning.query('BEGIN');
      await returning.query('SELECT agw_release_pot_v7($1, $2, 1)', [other, chat]);
      const booked = booking.query('SELECT agw_book_v16($1, $2::agw_booking_v16[], NULL, false) AS n', [DAEMON, batch]).then(
        (r) => Number(r.rows[0].n),
        (e: { code?: string }) => e.code,
      );
      await new Promise((r) => setTimeout(r, 300));
      // then part of its ai_image slice: the batch must not hold that pot while it waits for ai_chat
      await returning.query('SELECT agw_release_pot_v7($1, $2, 1)', [other, image]);
      await returning.query('COMMIT');
      expect(await booked).toBe(2);
    });
    expect(await deadlocks()).toBe(before);
    const counter = async (type: string) =>
      db.get<{ used: number; leased: number }>('SELECT used::int, leased::int FROM quota_counters WHERE user_id = ? AND usage_type = ? AND period_start = ?', [a.id, type, PERIOD]);
    expect(await counter('ai_chat')).toEqual({ used: 1, leased: 4 }); // 5 leased to the other daemon, 1 given back
    expect(await counter('ai_image')).toEqual({ used: 1, leased: 13 }); // 15, 1 given back, 1 consumed of this daemon's slice
  });
});

