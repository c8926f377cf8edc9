import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { applyBookings, type Booking } from '../../src/daemon/money/bookings.js';
import { PgBatcher } from '../../src/daemon/money/postgres/batches.js';
import { BOOKING_FIELDS, bookingRecords, bookingTypeOid, checkBookingType } from '../../src/daemon/money/postgres/booking-row.js';
import { quotaPeriod } from '../../src/daemon/money/quotas.js';
import { credit } from '../../src/daemon/money/wallets.js';
import type { Db } from '../../src/daemon/store/db.js';
import { migrate } from '../../src/daemon/store/migrations/index.js';
import { openAndMigrate } from '../../src/daemon/store/open.js';
import type { PgDb } from '../../src/daemon/store/postgres.js';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { usdToNano } from '../../src/shared/money.js';
import { batchRow } from '../helpers/bookings.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

/**
 * One set of booking rules, two implementations: SQLite applies a batch with
 * applyBookings (money/bookings.ts), PostgreSQL with agw_book_v11 (money/postgres/book.ts,
 * one round trip). The same bookings must give the same books on both: records, wallet
 * transactions (allowance first, a new allowance at a month's start, balance after each,
 * a charge the wallet cannot cover written off), quota counters, key budgets and both
 * rollups; and a batch applied twice books nothing twice.
 */
const OCT_30 = Date.UTC(2026, 9, 30, 12);
const NOV_1 = Date.UTC(2026, 10, 1, 0, 30);
const ALLOWANCE = usdToNano(0.01);
const USERS = ['usr_parity_a', 'usr_parity_b'];
/** Caller-chosen text (a model name) as the batch carries it: quotes, escapes, separators, spaces, 'NULL'. */
const AWKWARD = ['gpt-4o-mini', 'a "quoted" model', 'back\\slash\\', '(paren),comma', '{brace}', ' NULL ', '', 'NULL', "it's", 'tab\tand\nnewline', 'émoji 🦊', '\\"', '"'];
const KEYS = ['key_parity_a', 'key_parity_b'];

let tdb: TestDatabase;
let pgDb: Db;
let lite: SqliteDb;

async function seed(db: Db): Promise<void> {
  for (const [i, id] of USERS.entries()) {
    await db.run('INSERT INTO users (id, email, tier, created_at) VALUES (?, ?, ?, ?)', [id, `${id}@example.com`, 'pro', 1]);
    await db.run('INSERT INTO wallets (user_id, updated_at) VALUES (?, ?)', [id, 1]);
    await db.run('INSERT INTO api_keys (id, user_id, name, lookup, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [KEYS[i], id, 'k', `lk${i}`, 'h', 1]);
  }
  // user a: 1 USD; user b: a little, so its last charges are cut and written off
  await db.tx((q) => credit(q, { userId: USERS[0], amount: usdToNano(1), type: 'credit' }));
  await db.tx((q) => credit(q, { userId: USERS[1], amount: 1_000_000, type: 'credit' }));
}

function bookings(): Booking[] {
  const out: Booking[] = [];
  for (let i = 0; i < 30; i++) {
    const u = i % 2;
    const at = i < 14 ? OCT_30 + i * 60_000 : NOV_1 + i * 60_000;
    const status = i % 7 === 3 ? 'failed' : i % 11 === 5 ? 'refused' : 'finalized';
    const charged = status === 'finalized';
    out.push({
      id: `use_p${String(i).padStart(3, '0')}`,
      userId: USERS[u],
      keyId: i % 3 ? KEYS[u] : null,
      usageType: 'ai_chat',
      endpoint: i % 3 ? 'proxy' : 'chat',
      providerId: i % 4 ? 'openai' : 'anthropic',
      model: AWKWARD[i % AWKWARD.length],
      alias: null,
      projectId: i % 5 ? null : 'prj_x',
      periodKey: quotaPeriod(at).key,
      budgets: i % 3 ? [{ keyId: KEYS[u], period: i < 14 ? 'M2026-10' : 'M2026-11' }] : [],
      createdAt: at - 500,
      status,
      httpStatus: charged ? 200 : status === 'failed' ? 502 : null,
      promptTokens: charged ? 10 + i : 0,
      completionTokens: charged ? 5 : 0,
      cachedTokens: charged && i % 4 === 0 ? 4 : 0,
      cacheWriteTokens: charged && i % 4 === 0 ? 3 + i : 0,
      reasoningTokens: charged && i % 4 === 1 ? 2 : 0,
      droppedParams: i % 6 === 0 ? ['response_format', AWKWARD[i % AWKWARD.length]] : null,
      units: 0,
      rawNano: charged ? 1_000_000 + i : 0,
      customerNano: charged ? 2_500_000 + 7 * i : 0,
      holdNano: 3_000_000,
      writtenOffNano: 0,
      settledAt: at,
      monthlyAllowance: ALLOWANCE,
      description: `test ${i}: ${AWKWARD[(i + 3) % AWKWARD.length]}`,
      stream: i % 2 === 0,
      answerStatus: charged ? 200 : status === 'failed' ? 503 : 402,
      errorCode: charged ? null : status === 'failed' ? 'UPSTREAM_UNREACHABLE' : 'INSUFFICIENT_FUNDS',
      latencyMs: 12.5,
      ttfbMs: 3.25,
      attempts: status === 'refused' ? 0 : 1,
    });
  }
  return out;
}

/** The books, as comparable rows (ids of wallet transactions differ by engine: left out). */
async function books(db: Db): Promise<unknown> {
  const num = (rows: Record<string, unknown>[]) => rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' ? Number(v) : v])));
  return {
    wallets: num(await db.all('SELECT user_id, balance_nusd, allowance_month, allowance_used_nusd, last_allowance_at, updated_at FROM wallets ORDER BY user_id')),
    transactions: num(
      await db.all(
        `SELECT user_id, type, amount_nusd, allowance_nusd, balance_after_nusd, description, provider_id, model, project_id, usage_id, created_at
           FROM wallet_transactions WHERE type = 'usage' ORDER BY usage_id`,
      ),
    ),
    records: num(
      await db.all(
        `SELECT id, user_id, key_id, usage_type, status, endpoint, provider_id, model, project_id, prompt_tokens, completion_tokens,
                cached_tokens, raw_cost_nusd, customer_cost_nusd, hold_nusd, written_off_nusd, http_status, answer_status, error_code,
                stream, latency_ms, ttfb_ms, attempts, period_start, created_at, finalized_at, cache_write_tokens, reasoning_tokens,
                dropped_params FROM usage_records ORDER BY id`,
      ),
    ),
    quotas: num(await db.all('SELECT user_id, usage_type, period_start, used FROM quota_counters ORDER BY user_id, usage_type, period_start')),
    keySpend: num(await db.all('SELECT key_id, period, spent_nusd FROM key_spend ORDER BY key_id, period')),
    rollups: num(await db.all('SELECT * FROM spend_daily ORDER BY user_id, day, provider_id, project_key')),
    keyRollups: num(await db.all('SELECT * FROM spend_key_daily ORDER BY user_id, day, key_id')),
  };
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  pgDb = (await openAndMigrate({ store: tdb.url, dataDir: '/nonexistent' })).db;
  lite = new SqliteDb(':memory:');
  await migrate(lite);
  await seed(lite);
  await seed(pgDb);
  await pgDb.run('INSERT INTO daemons (id, started_at, expires_at) VALUES (?, ?, ?)', ['d_parity', 0, Date.now() + 600_000]);
});
afterAll(async () => {
  await lite?.close();
  await pgDb?.close();
  await tdb?.drop();
});

describe('agw_book_v16 books what applyBookings books', () => {
  test('the same bookings, in two batches with an overlap, give the same books on SQLite and PostgreSQL', async () => {
    const all = bookings();
    await lite.tx((q) => applyBookings(q, all.slice(0, 12)));
    await lite.tx((q) => applyBookings(q, all));
    await lite.tx((q) => applyBookings(q, all));

    const batcher = new PgBatcher(pgDb as PgDb, console, () => undefined);
    const none = { wallet: false, quota: false, budgets: [] };
    await Promise.all(all.slice(0, 12).map((b) => batcher.push(b, none, 'd_parity')));
    await Promise.all(all.map((b) => batcher.push(b, none, 'd_parity')));
    await Promise.all(all.map((b) => batcher.push(b, none, 'd_parity')));

    const expected = await books(lite);
    expect(await books(pgDb)).toEqual(expected);
    // and the figures are the money rules': both wallets used October's allowance, user b ran dry and was never overdrawn
    const e = expected as { wallets: { balance_nusd: number }[]; records: { written_off_nusd: number; user_id: string }[] };
    expect(e.wallets.every((w) => w.balance_nusd >= 0)).toBe(true);
    expect(e.records.some((r) => r.user_id === USERS[1] && r.written_off_nusd > 0)).toBe(true);
  });

  test('an unlimited wallet books as on SQLite: every call charged to the record, the balance untouched', async () => {
    const user = 'usr_parity_u';
    for (const db of [lite, pgDb] as Db[]) {
      await db.run('INSERT INTO users (id, email, tier, created_at) VALUES (?, ?, ?, ?)', [user, `${user}@example.com`, 'pro', 1]);
      await db.run('INSERT INTO wallets (user_id, updated_at, unlimited, balance_nusd) VALUES (?, ?, 1, 5)', [user, 1]);
    }
    const calls = bookings()
      .filter((b) => b.settledAt < NOV_1)
      .map((b) => ({ ...b, id: b.id.replace('use_p', 'use_u'), userId: user, keyId: null, budgets: [] }));
    await lite.tx((q) => applyBookings(q, calls));
    const batcher = new PgBatcher(pgDb as PgDb, console, () => undefined);
    await Promise.all(calls.map((b) => batcher.push(b, { wallet: false, quota: false, budgets: [] }, 'd_parity')));
    const expected = (await books(lite)) as { transactions: { user_id: string; balance_after_nusd: number }[] };
    expect(await books(pgDb)).toEqual(expected);
    expect(expected.transactions.filter((t) => t.user_id === user).map((t) => t.balance_after_nusd)).toEqual(
      calls.filter((b) => b.status === 'finalized').map(() => 5),
    );
  });

  test("a hot account's batches, every call in one row of each rollup, book as on SQLite: failures, refusals and a write-off counted alike", async () => {
    // agw_book_v13 adds such a batch to its rollup rows with plain statements, from figures
    // summed in its loop; a batch whose calls leave the row (another provider, the next day)
    // goes the joining way
    const user = 'usr_parity_hot';
    const key = 'key_parity_hot';
    for (const db of [lite, pgDb] as Db[]) {
      await db.run('INSERT INTO users (id, email, tier, created_at) VALUES (?, ?, ?, ?)', [user, `${user}@example.com`, 'pro', 1]);
      await db.run('INSERT INTO wallets (user_id, updated_at) VALUES (?, ?)', [user, 1]);
      await db.run('INSERT INTO api_keys (id, user_id, name, lookup, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [key, user, 'k', 'lkhot', 'h', 1]);
      // enough for a few calls past the allowance: a later one is cut and written off
      await db.tx((q) => credit(q, { userId: user, amount: 4_000_000, type: 'credit' }));
    }
    const calls = bookings()
      .filter((b) => b.settledAt >= NOV_1)
      .map((b) => ({ ...b, id: b.id.replace('use_p', 'use_h'), userId: user, keyId: key, providerId: 'openai', projectId: 'prj_hot', budgets: [] }));
    // a call of the fourth batch leaves the row by its key alone, the last call of the last by its provider
    calls[11] = { ...calls[11], keyId: null };
    calls[calls.length - 1] = { ...calls[calls.length - 1], providerId: 'anthropic' };
    // and batches whose two calls differ by their account alone, by their day alone, by their project alone
    const twin = { ...calls[0], keyId: null };
    const batches = [calls.slice(0, 1), calls.slice(1, 2), calls.slice(2, 9), calls.slice(9, 13), calls.slice(13),
      [{ ...twin, id: 'use_h_twin_1' }, { ...twin, id: 'use_h_twin_2', userId: USERS[0] }],
      [{ ...twin, id: 'use_h_twin_3' }, { ...twin, id: 'use_h_twin_4', createdAt: twin.createdAt - 86_400_000 }],
      [{ ...twin, id: 'use_h_twin_5' }, { ...twin, id: 'use_h_twin_6', projectId: null }]];
    expect(batches.slice(0, 3).flat().map((b) => b.status)).toEqual(expect.arrayContaining(['finalized', 'failed', 'refused']));
    const batcher = new PgBatcher(pgDb as PgDb, console, () => undefined);
    for (const batch of batches) {
      await lite.tx((q) => applyBookings(q, batch));
      await Promise.all(batch.map((b) => batcher.push(b, { wallet: false, quota: false, budgets: [] }, 'd_parity')));
    }
    const expected = (await books(lite)) as { records: { id: string; written_off_nusd: number }[] };
    expect(await books(pgDb)).toEqual(expected);
    // what the test is about: a call written off inside a one-row batch
    const third = new Set(batches[2].map((b) => b.id));
    expect(expected.records.some((r) => third.has(r.id) && r.written_off_nusd > 0)).toBe(true);
  });
});

describe('the batch as an array of rows, in binary (bookingRecords)', () => {
  test('every field arrives as sent, whatever the text holds', async () => {
    const pool = ['"', '\\', ',', '(', ')', '{', '}', ' ', "'", 'N', 'U', 'L', 'x', '\n', '\t', 'é', '🦊', '\0', '[', ':', '\ud800'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    const texts = [...AWKWARD, '\0', 'a\0b', ...Array.from({ length: 200 }, () => Array.from({ length: next() % 12 }, () => pool[next() % pool.length]).join(''))];
    const rows = texts.map((t, i) => ({
      ord: i, id: `use_arr_${i}`, userId: t, keyId: i % 2 ? null : t, model: t, description: t, budgets: i % 3 ? [] : [{ keyId: t, period: 'M2026-11', leased: i % 2 === 0 }],
      createdAt: 1_700_000_000_000 + i, units: i / 7, latencyMs: [null, 1.25, -0.5, Infinity, NaN][i % 5], stream: i % 2 === 1, rawNano: 9_007_199_254_740_991 - i,
    }));
    const got = await pgDb.all<Record<string, unknown>>(
      `SELECT (r).ord, (r)."userId", (r)."keyId", (r).model, (r).description, (r).budgets::text AS budgets, (r)."createdAt", (r).units,
              (r)."latencyMs", (r).stream, (r)."rawNano", (r)."errorCode" FROM unnest(?::agw_booking_v16[]) AS r ORDER BY (r).ord`,
      [bookingRecords(rows, await bookingTypeOid(pgDb))],
    );
    // PostgreSQL text holds no NUL, and UTF-8 no lone surrogate: each arrives as U+FFFD
    const text = (t: string) => t.replaceAll('\0', '\uFFFD').replaceAll('\ud800', '\uFFFD');
    expect(got.map((g) => ({ ...g, budgets: JSON.parse(g.budgets as string), createdAt: Number(g.createdAt), rawNano: String(g.rawNano) }))).toEqual(
      rows.map((r) => ({
        ord: r.ord, userId: text(r.userId), keyId: r.keyId === null ? null : text(r.keyId), model: text(r.model), description: text(r.description),
        budgets: r.budgets.map((b) => ({ ...b, keyId: text(b.keyId) })), createdAt: r.createdAt, units: r.units, latencyMs: r.latencyMs,
        stream: r.stream, rawNano: String(r.rawNano), errorCode: null,
      })),
    );
  });

  test('a value that does not fit its column refuses the booking instead of being rounded', () => {
    expect(() => bookingRecords([{ ord: 0, id: 'use_x', rawNano: 1.5 }], 1)).toThrow(/rawNano: 1.5 is not an integer/);
    expect(() => bookingRecords([{ ord: 0, id: 'use_x', customerNano: 2 ** 53 }], 1)).toThrow(/customerNano/);
    expect(() => bookingRecords([{ ord: 0, id: 'use_x', stream: 1 }], 1)).toThrow(/stream: 1 is not a boolean/);
    expect(() => bookingRecords([{ ord: 0, id: 'use_x', units: '3' }], 1)).toThrow(/units: 3 is not a number/);
    expect(() => bookingRecords([{ ord: 2 ** 31, id: 'use_x' }], 1)).toThrow(/ord: 2147483648 is beyond a 32-bit integer/);
  });

  test("the fields go by position, so the daemon's list is the store's type, and a daemon whose list is not refuses to start", async () => {
    const fields = ['ord', 'id', 'userId', 'keyId', 'usageType', 'endpoint', 'providerId', 'model', 'alias', 'projectId', 'periodKey', 'budgets',
      'createdAt', 'status', 'httpStatus', 'promptTokens', 'completionTokens', 'cachedTokens', 'units', 'rawNano', 'customerNano', 'holdNano',
      'writtenOffNano', 'settledAt', 'monthlyAllowance', 'description', 'stream', 'answerStatus', 'errorCode', 'latencyMs', 'ttfbMs', 'attempts',
      'month', 'monthStart', 'leasedWallet', 'leasedQuota', 'cacheWriteTokens', 'reasoningTokens', 'droppedParams'];
    expect(BOOKING_FIELDS).toEqual(fields);
    await expect(checkBookingType(pgDb)).resolves.toBeUndefined();
    // the type as another build would have left it: the daemon refuses to start (the change is rolled back)
    await expect(
      pgDb.tx(async (q) => {
        await q.run('ALTER TYPE agw_booking_v16 DROP ATTRIBUTE "ttfbMs"');
        await checkBookingType(q);
      }),
    ).rejects.toMatchObject({ code: 'SCHEMA_MISMATCH', message: expect.stringContaining('latencyMs, attempts') });
    await expect(checkBookingType(pgDb)).resolves.toBeUndefined();
  });

  test("kept bodies go in with the batch, a binary body's NUL as U+FFFD instead of refusing the booking", async () => {
    const [call] = bookings().filter((b) => b.status === 'finalized' && b.userId === USERS[0]);
    const b = { ...call, id: 'use_body_nul', bodies: { request: 'RIFF\0\0WAVE', response: '{"ok":true}', requestBytes: 10, responseBytes: 11 } };
    const batcher = new PgBatcher(pgDb as PgDb, console, () => undefined);
    await batcher.push(b, { wallet: false, quota: false, budgets: [] }, 'd_parity');
    expect(await pgDb.get('SELECT request, response, request_bytes FROM request_bodies WHERE usage_id = ?', ['use_body_nul'])).toEqual({
      request: 'RIFF\uFFFD\uFFFDWAVE',
      response: '{"ok":true}',
      request_bytes: expect.anything(),
    });
    expect((await pgDb.get<{ n: number }>("SELECT count(*)::int AS n FROM wallet_transactions WHERE usage_id = 'use_body_nul'"))?.n).toBe(1);
  });

  test("a batch of one account is held by that account, whatever its first row or its array's bounds (from a review)", async () => {
    // a row naming no account, first, then a call of an account that exists: the call is booked
    // (on a retry that looks), not dropped with the row; and an array that does not start at 1
    const [call] = bookings().filter((b) => b.status === 'finalized' && b.userId === USERS[0]);
    const oid = await bookingTypeOid(pgDb);
    const row = (id: string, ord: number, over: Partial<Booking> = {}) => batchRow({ ...call, id, keyId: null, budgets: [], ...over }, ord);
    const nameless = bookingRecords([row('use_nameless_0', 0, { userId: null as unknown as string }), row('use_named_1', 1)], oid);
    expect((await pgDb.get<{ n: number }>('SELECT agw_book_v16(?, ?::agw_booking_v16[], NULL, true) AS n', ['d_parity', nameless]))?.n).toBe(1);
    await pgDb.run(`CREATE FUNCTION test_from_5(a agw_booking_v16[]) RETURNS agw_booking_v16[] LANGUAGE plpgsql AS $$
      DECLARE r agw_booking_v16[]; BEGIN FOR i IN 1 .. cardinality(a) LOOP r[4 + i] := a[i]; END LOOP; RETURN r; END $$`);
    const shifted = bookingRecords([row('use_named_2', 2), row('use_named_3', 3)], oid);
    expect((await pgDb.get<{ n: string }>('SELECT array_dims(test_from_5(?::agw_booking_v16[])) AS n', [shifted]))?.n).toBe('[5:6]');
    expect((await pgDb.get<{ n: number }>('SELECT agw_book_v16(?, test_from_5(?::agw_booking_v16[]), NULL, false) AS n', ['d_parity', shifted]))?.n).toBe(2);
    const ids = (await pgDb.all<{ id: string }>("SELECT id FROM usage_records WHERE id LIKE 'use_name%' ORDER BY id")).map((r) => r.id);
    expect(ids).toEqual(['use_named_1', 'use_named_2', 'use_named_3']);
  });

  test('agw_book_v7, for a daemon of the previous version, books a JSON batch the same way', async () => {
    const calls = bookings()
      .filter((b) => b.status === 'finalized' && b.userId === USERS[0]) // the account with funds: nothing written off
      .slice(0, 4)
      .map((b, ord) => ({ ...b, id: b.id.replace('use_p', 'use_j'), ord, month: '2026-11', monthStart: NOV_1, leasedWallet: false, leasedQuota: false }));
    const before = await pgDb.get<{ n: number }>("SELECT count(*)::int AS n FROM wallet_transactions WHERE usage_id LIKE 'use_j%'");
    const rows = await pgDb.all<{ n: number }>('SELECT agw_book_v7(?, ?::jsonb) AS n', ['d_parity', JSON.stringify(calls)]);
    expect(rows[0].n).toBe(4);
    expect((await pgDb.get<{ n: number }>("SELECT count(*)::int AS n FROM wallet_transactions WHERE usage_id LIKE 'use_j%'"))?.n).toBe((before?.n ?? 0) + 4);
    expect((await pgDb.all<{ model: string }>("SELECT model FROM usage_records WHERE id LIKE 'use_j%' ORDER BY id")).map((r) => r.model)).toEqual(calls.map((c) => c.model));
    const debits = await pgDb.all<{ amount_nusd: number | string; usage_id: string }>("SELECT amount_nusd, usage_id FROM wallet_transactions WHERE usage_id LIKE 'use_j%' ORDER BY usage_id");
    expect(debits.map((d) => Number(d.amount_nusd))).toEqual(calls.map((c) => -c.customerNano));
  });
});

describe('an account deleted while its calls are booked', () => {
  test("a batch drops the bookings of an account that is gone and books the others; deleting an account deletes its records and transactions", async () => {
    const gone = 'usr_parity_gone';
    const [kept] = bookings().filter((b) => b.status === 'finalized' && b.userId === USERS[0]);
    const batcher = new PgBatcher(pgDb as PgDb, console, () => undefined);
    const none = { wallet: false, quota: false, budgets: [] };
    await Promise.all([
      batcher.push({ ...kept, id: 'use_gone_1', userId: gone, keyId: null, budgets: [] }, none, 'd_parity'),
      batcher.push({ ...kept, id: 'use_kept_1', keyId: null, budgets: [] }, none, 'd_parity'),
    ]);
    const ids = async (sql: string) => (await pgDb.all<{ id: string }>(sql)).map((r) => r.id);
    expect(await ids("SELECT id FROM usage_records WHERE id IN ('use_gone_1', 'use_kept_1')")).toEqual(['use_kept_1']);

    await pgDb.run('DELETE FROM users WHERE id = ?', [USERS[0]]);
    expect(await ids(`SELECT id FROM usage_records WHERE user_id = '${USERS[0]}'`)).toEqual([]);
    expect(await ids(`SELECT usage_id AS id FROM wallet_transactions WHERE user_id = '${USERS[0]}'`)).toEqual([]);
  });
});
