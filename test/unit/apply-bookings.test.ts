import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyBooking, applyBookings, type Booking } from '../../src/daemon/money/bookings.js';
import { migrate } from '../../src/daemon/store/migrations/index.js';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { quotaPeriod } from '../../src/daemon/money/quotas.js';
import { createUser } from '../../src/daemon/store/users.js';
import { credit } from '../../src/daemon/money/wallets.js';
import { usdToNano } from '../../src/shared/money.js';

/**
 * The booking ledger applies its batches with one statement per row touched (rollup row,
 * quota counter, wallet) instead of per booking. The books must come out exactly as if
 * every booking had been applied on its own, in order: same records, same wallet
 * transactions (allowance/balance split, balance after each), same counters and rollups,
 * also across a month boundary inside one batch and with bookings already in the store.
 */
const dir = mkdtempSync(join(tmpdir(), 'agw-apply-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const OCT_30 = Date.UTC(2026, 9, 30, 12);
const NOV_1 = Date.UTC(2026, 10, 1, 0, 30);
const ALLOWANCE = usdToNano(0.01);

/** Two stores holding the same two users with 1 USD each (one file, copied). */
async function twoStores(): Promise<{ one: SqliteDb; batch: SqliteDb; users: string[] }> {
  const base = new SqliteDb(join(dir, 'base.db'));
  await migrate(base);
  const users: string[] = [];
  for (const email of ['a@example.com', 'b@example.com']) {
    const u = await base.tx((q) => createUser(q, { email, tier: 'pro' }));
    await base.tx((q) => credit(q, { userId: u.id, amount: usdToNano(1), type: 'credit' }));
    users.push(u.id);
  }
  await base.close();
  copyFileSync(join(dir, 'base.db'), join(dir, 'one.db'));
  copyFileSync(join(dir, 'base.db'), join(dir, 'batch.db'));
  return { one: new SqliteDb(join(dir, 'one.db')), batch: new SqliteDb(join(dir, 'batch.db')), users };
}

function bookings(users: string[]): Booking[] {
  const out: Booking[] = [];
  for (let i = 0; i < 24; i++) {
    const userId = users[i % 2];
    const at = i < 12 ? OCT_30 + i * 60_000 : NOV_1 + i * 60_000;
    const failed = i % 7 === 3;
    out.push({
      id: `use_t${String(i).padStart(3, '0')}`,
      userId,
      usageType: 'ai_chat',
      endpoint: i % 3 ? 'proxy' : 'chat',
      providerId: i % 4 ? 'openai' : 'anthropic',
      model: 'gpt-4o-mini',
      alias: null,
      projectId: null,
      periodKey: quotaPeriod(at).key,
      createdAt: at - 500,
      status: failed ? 'failed' : 'finalized',
      promptTokens: failed ? 0 : 10 + i,
      completionTokens: failed ? 0 : 5,
      units: 0,
      rawNano: failed ? 0 : 1_000_000 + i,
      customerNano: failed ? 0 : 2_500_000 + 7 * i, // ~0.0025 USD: the 0.01 USD allowance runs out mid-month
      httpStatus: failed ? 502 : 200,
      settledAt: at,
      monthlyAllowance: ALLOWANCE,
      description: `test ${i}`,
      keyId: null,
      budgets: [],
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0,
      droppedParams: null,
      holdNano: 3_000_000,
      writtenOffNano: 0,
      stream: false,
      answerStatus: failed ? 503 : 200,
      errorCode: failed ? 'UPSTREAM_UNREACHABLE' : null,
      latencyMs: 12.5,
      ttfbMs: 12.5,
      attempts: 1,
    });
  }
  return out;
}

async function books(db: SqliteDb): Promise<unknown> {
  return {
    wallets: await db.all('SELECT user_id, balance_nusd, allowance_month, allowance_used_nusd, last_allowance_at, updated_at FROM wallets ORDER BY user_id'),
    transactions: await db.all(
      `SELECT user_id, type, amount_nusd, allowance_nusd, balance_after_nusd, description, provider_id, model, usage_id, created_at
         FROM wallet_transactions WHERE type = 'usage' ORDER BY usage_id`,
    ),
    records: await db.all('SELECT * FROM usage_records ORDER BY id'),
    quotas: await db.all('SELECT * FROM quota_counters ORDER BY user_id, usage_type, period_start'),
    rollups: await db.all('SELECT * FROM spend_daily ORDER BY user_id, day, provider_id, project_key'),
  };
}

describe('applyBookings', () => {
  it('books a batch exactly as one booking after the other would', async () => {
    const { one, batch, users } = await twoStores();
    const all = bookings(users);
    for (const b of all) await one.tx((q) => applyBooking(q, b));

    // the first 5 already in the store (a journal replayed after they were applied), then all in one batch
    await batch.tx((q) => applyBookings(q, all.slice(0, 5)));
    expect(await batch.tx((q) => applyBookings(q, all))).toBe(all.length - 5);
    expect(await batch.tx((q) => applyBookings(q, all))).toBe(0);

    const expected = await books(one);
    expect(await books(batch)).toEqual(expected);
    // and the figures are the ones the money rules give: allowance first, a new allowance on Nov 1
    const tx = (expected as { transactions: { allowance_nusd: number; amount_nusd: number; created_at: number }[] }).transactions;
    const octAllowance = tx.filter((t) => t.created_at < NOV_1).reduce((n, t) => n + t.allowance_nusd, 0);
    expect(octAllowance).toBe(2 * ALLOWANCE); // both users used up October's allowance
    expect(tx.some((t) => t.created_at >= NOV_1 && t.allowance_nusd > 0)).toBe(true);
    await one.close();
    await batch.close();
  });
});
