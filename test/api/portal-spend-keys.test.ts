import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin, type PortalSession } from '../helpers/portal.js';
import { applyBookings, type Booking } from '../../src/daemon/money/bookings.js';
import { quotaPeriod } from '../../src/daemon/money/quotas.js';
import { createApiKey } from '../../src/daemon/store/keys.js';
import { nanoToUsd } from '../../src/shared/money.js';
import { settledCall } from '../helpers/bookings.js';

/**
 * The spend summary's byKey: calls made with each agw_ key and the key's name, from the
 * per-key daily rollup plus the partial first day of the range from the records, exactly
 * as byProvider is computed. Calls without a key (OAuth, session) are not in it.
 */
const DAY = 86_400_000;
let td: TestDaemon;
let ada: TestUser;
let s: PortalSession;
let ci: string;
let seq = 0;

function booking(userId: string, keyId: string | null, createdAt: number, customerNano: number, status: Booking['status'] = 'finalized'): Booking {
  const ok = status === 'finalized';
  return settledCall(`use_keyspend_${seq++}`, userId, createdAt + 100, ok ? customerNano : 0, {
    keyId,
    periodKey: quotaPeriod(createdAt).key,
    createdAt,
    status,
    httpStatus: ok ? 200 : 503,
    answerStatus: ok ? 200 : 503,
    promptTokens: 10,
    completionTokens: 10,
    rawNano: ok ? customerNano / 2 : 0,
    holdNano: customerNano,
    description: 'test',
    latencyMs: 5,
    ttfbMs: 5,
  });
}

beforeAll(async () => {
  td = await startTestDaemon();
  ada = await td.user({ tier: 'pro', balance: 100 });
  s = await portalLogin(td, ada);
  const db = td.daemon.ctx.db;
  ci = (await db.tx((q) => createApiKey(q, ada.id, 'ci <runner>'))).id;
  const now = Date.now();
  const since7 = now - 7 * DAY;
  await db.tx((q) =>
    applyBookings(q, [
      booking(ada.id, ada.keyId, now - 1000, 2_000_000_000),
      booking(ada.id, ada.keyId, now - 3 * DAY, 1_000_000_000),
      booking(ada.id, ada.keyId, now - 3 * DAY, 0, 'failed'),
      booking(ada.id, ci, now - 2 * DAY, 4_000_000_000),
      // the partial first day of a 7d range: one call inside it, one before `since` on the same day
      booking(ada.id, ci, since7 + 60_000, 500_000_000),
      booking(ada.id, ci, Math.max(Math.floor(since7 / DAY) * DAY, since7 - 3_600_000), 700_000_000),
      booking(ada.id, ci, now - 20 * DAY, 8_000_000_000),
      booking(ada.id, null, now - 1000, 16_000_000_000), // an OAuth call: no key
    ]),
  );
});
afterAll(() => td.close());

describe('GET /api/portal/spend/summary byKey', () => {
  test('7d: per key with its name, the partial first day counted from the records', async () => {
    const { status, body } = await getJson(td, '/portal/spend/summary?range=7d', s.cookie);
    expect(status).toBe(200);
    expect(body.byKey).toEqual([
      { keyId: ci, keyName: 'ci <runner>', calls: 2, failures: 0, rawCost: 2.25, customerCost: nanoToUsd(4_500_000_000) },
      { keyId: ada.keyId, keyName: 'test', calls: 3, failures: 1, rawCost: 1.5, customerCost: 3 },
    ]);
    // totals still include the call without a key
    expect(body.totals.customerCost).toBe(nanoToUsd(23_500_000_000));
  });

  test('30d: the older call of the ci key too; another user sees none of them', async () => {
    const { body } = await getJson(td, '/portal/spend/summary?range=30d', s.cookie);
    expect(body.byKey.find((k: { keyId: string }) => k.keyId === ci)).toMatchObject({ calls: 4, customerCost: nanoToUsd(13_200_000_000) });
    const bob = await td.user();
    const other = await getJson(td, '/portal/spend/summary?range=30d', (await portalLogin(td, bob)).cookie);
    expect(other.body.byKey).toEqual([]);
  });

  test('a key’s spent (no budget: all time) agrees with the rollup', async () => {
    const keys = await (await td.fetch('/keys', { key: ada.key })).json();
    expect(keys.items.find((k: { id: string }) => k.id === ci).spent).toBe(nanoToUsd(13_200_000_000));
  });
});
