import pg from 'pg';
import type { Booking } from '../../src/daemon/money/bookings.js';
import { quotaPeriod } from '../../src/daemon/money/quotas.js';
import { monthKey, monthStart } from '../../src/daemon/money/wallets.js';

/**
 * A finalized unified-chat call as the gateway books it, settled at `at` for `customerNano`
 * (a key without limits unless `over` says otherwise).
 */
export function settledCall(id: string, userId: string, at: number, customerNano: number, over: Partial<Booking> = {}): Booking {
  return {
    id,
    userId,
    keyId: null,
    usageType: 'ai_chat',
    endpoint: 'chat',
    providerId: 'openai',
    model: 'gpt-4o-mini',
    alias: null,
    projectId: null,
    periodKey: quotaPeriod(at).key,
    budgets: [],
    createdAt: at - 5,
    status: 'finalized',
    httpStatus: 200,
    promptTokens: 12,
    completionTokens: 9,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    droppedParams: null,
    units: 0,
    rawNano: Math.max(0, customerNano - 1000),
    customerNano,
    holdNano: customerNano * 2,
    writtenOffNano: 0,
    settledAt: at,
    monthlyAllowance: 0,
    description: `call ${id}`,
    stream: false,
    answerStatus: 200,
    errorCode: null,
    latencyMs: 1.5,
    ttfbMs: 1,
    attempts: 1,
    ...over,
  };
}

/** A booking as the batch carries it to agw_book_v13 (PgBatcher's row): its place, month and slices. */
export function batchRow(b: Booking, ord: number, leased: { wallet?: boolean; quota?: boolean } = {}) {
  return { ...b, ord, month: monthKey(b.settledAt), monthStart: monthStart(b.settledAt), leasedWallet: leased.wallet ?? false, leasedQuota: leased.quota ?? false };
}

/** Runs `fn` with `n` sessions of their own on `url` (to interleave transactions), and closes them. */
export async function withSessions<T>(url: string, n: number, fn: (sessions: pg.Client[]) => Promise<T>): Promise<T> {
  const sessions = Array.from({ length: n }, () => new pg.Client({ connectionString: url }));
  await Promise.all(sessions.map((s) => s.connect()));
  try {
    return await fn(sessions);
  } finally {
    await Promise.all(sessions.map((s) => s.end()));
  }
}
