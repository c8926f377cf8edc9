import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * The matrix guard: under AGW_TEST_STORE=postgres every daemon of the API suites really
 * runs on PostgreSQL (and otherwise on SQLite), and the wallet answers alike on both.
 */
let d: TestDaemon;
beforeAll(async () => {
  d = await startTestDaemon({ yaml: 'wallet: { selfTopup: true }\n' });
});
afterAll(() => d?.close());

test('the daemon runs on the store the matrix leg asked for', () => {
  expect(d.daemon.ctx.db.dialect).toBe(process.env.AGW_TEST_STORE === 'postgres' ? 'postgres' : 'sqlite');
});

test('wallet top-ups and transactions answer the same on both stores', async () => {
  const u = await d.user({ tier: 'free', balance: 1.5 });
  const topup = await d.fetch('/wallet/topup', { key: u.key, method: 'POST', json: { amount: 2.25 } });
  expect(topup.status).toBe(200);
  expect(await topup.json()).toMatchObject({ balance: 3.75, currency: 'USD', unlimited: false });
  const bad = await d.fetch('/wallet/topup', { key: u.key, method: 'POST', json: { amount: -1 } });
  expect(bad.status).toBe(400);
  expect(await bad.json()).toMatchObject({ code: 'INVALID_REQUEST' });
  const txs = (await (await d.fetch('/wallet/transactions?limit=1', { key: u.key })).json()) as {
    items: { type: string; amount: number; balanceAfter: number }[];
    nextCursor: string | null;
  };
  expect(txs.items).toEqual([expect.objectContaining({ type: 'topup', amount: 2.25, balanceAfter: 3.75 })]);
  expect(txs.nextCursor).not.toBeNull();
  const next = (await (await d.fetch(`/wallet/transactions?limit=5&cursor=${txs.nextCursor}`, { key: u.key })).json()) as {
    items: { type: string; amount: number }[];
    nextCursor: string | null;
  };
  expect(next).toEqual({ items: [expect.objectContaining({ type: 'credit', amount: 1.5 })], nextCursor: null });
});
