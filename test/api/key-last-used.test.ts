import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { getJson, portalLogin, type PortalSession } from '../helpers/portal.js';
import { openStore } from '../../src/daemon/store/open.js';
import { flushKeyUses, noteKeyUse } from '../../src/daemon/auth/key-usage.js';
import { createApiKey } from '../../src/daemon/store/keys.js';

/** Issue 14 point 8: keys' "Last used" was never set. Written in batches, minute resolution. */
const MINUTE = 60_000;
const floorMinute = (t: number) => t - (t % MINUTE);

async function lastUsed(td: TestDaemon, s: PortalSession, keyId: string): Promise<string | null> {
  const { body } = await getJson<{ items: { id: string; lastUsedAt: string | null }[] }>(td, '/portal/keys', s.cookie);
  return body.items.find((k) => k.id === keyId)!.lastUsedAt;
}

describe('keys’ lastUsedAt is set after use, within the flush interval, without a write per call', () => {
  let td: TestDaemon;
  let alice: TestUser;
  let session: PortalSession;

  beforeAll(async () => {
    td = await startTestDaemon({ yaml: 'gateway: { keyLastUsedFlushMs: 200 }\n' });
    alice = await td.user({ tier: 'pro', balance: 1 });
    session = await portalLogin(td, alice);
  });
  afterAll(() => td.close());

  test('a key used at the API and at the gateway shows lastUsedAt (to the minute); an unused key stays null', async () => {
    const unused = await td.daemon.ctx.db.tx((q) => createApiKey(q, alice.id, 'unused'));
    expect(await lastUsed(td, session, alice.keyId)).toBeNull();
    const before = Date.now();
    for (let i = 0; i < 5; i++) {
      expect((await td.fetch('/wallet', { key: alice.key })).status).toBe(200);
      expect((await td.fetch('/gateway/entitlements', { key: alice.key })).status).toBe(200);
    }
    let seen: string | null = null;
    for (let t = Date.now(); !seen && Date.now() - t < 5_000; ) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await lastUsed(td, session, alice.keyId);
    }
    expect(seen).not.toBeNull();
    const at = Date.parse(seen!);
    expect(at % MINUTE).toBe(0);
    expect(at).toBeGreaterThanOrEqual(floorMinute(before));
    expect(at).toBeLessThanOrEqual(Date.now());
    expect(await lastUsed(td, session, unused.id)).toBeNull();
  });

  test('a flush never moves lastUsedAt back (several daemons on one store keep the latest use)', async () => {
    const db = td.daemon.ctx.db;
    const k = await db.tx((q) => createApiKey(q, alice.id, 'other-daemon'));
    const later = floorMinute(Date.now()) + 10 * MINUTE; // another daemon's flush, as far as this one knows
    await db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [later, k.id]);
    await flushKeyUses(db); // the uses the earlier tests noted, not flushed yet
    noteKeyUse(db, k.id);
    expect(await flushKeyUses(db)).toBe(1);
    expect(Date.parse((await lastUsed(td, session, k.id))!)).toBe(later);
  });
});

test('stopping the daemon writes the uses not flushed yet', async () => {
  const td = await startTestDaemon(); // default interval: 60 s, far longer than this test
  try {
    const bob = await td.user({ tier: 'free' });
    expect((await td.fetch('/wallet', { key: bob.key })).status).toBe(200);
    const before = await td.daemon.ctx.db.get<{ last_used_at: number | null }>('SELECT last_used_at FROM api_keys WHERE id = ?', [bob.keyId]);
    expect(before!.last_used_at).toBeNull();
    const { store } = td.daemon.ctx.config;
    await td.daemon.close();
    const db = await openStore({ store, dataDir: td.dataDir });
    try {
      const row = await db.get<{ last_used_at: number | null }>('SELECT last_used_at FROM api_keys WHERE id = ?', [bob.keyId]);
      expect(Number(row!.last_used_at)).toBe(floorMinute(Number(row!.last_used_at)));
      expect(row!.last_used_at).not.toBeNull();
    } finally {
      await db.close();
    }
  } finally {
    await td.close();
  }
});

test('issue #33 item 19: a key just used shows lastUsedAt at once on the same daemon; the store is written at the flush', async () => {
  const td = await startTestDaemon(); // default interval: 60 s
  try {
    const carol = await td.user({ tier: 'free' });
    const s = await portalLogin(td, carol);
    expect(await lastUsed(td, s, carol.keyId)).toBeNull();
    const before = Date.now();
    expect((await td.fetch('/wallet', { key: carol.key })).status).toBe(200);
    const shown = await lastUsed(td, s, carol.keyId);
    expect(shown).not.toBeNull();
    expect(Date.parse(shown!)).toBeGreaterThanOrEqual(floorMinute(before));
    const keys = await (await td.fetch('/keys', { key: carol.key })).json();
    expect(keys.items.find((k: { id: string }) => k.id === carol.keyId).lastUsedAt).toBe(shown);
    // not written yet: the store still says never
    const row = () => td.daemon.ctx.db.get<{ last_used_at: number | null }>('SELECT last_used_at FROM api_keys WHERE id = ?', [carol.keyId]);
    expect((await row())!.last_used_at).toBeNull();
    await flushKeyUses(td.daemon.ctx.db);
    expect(iso(Number((await row())!.last_used_at))).toBe(shown);
    expect(await lastUsed(td, s, carol.keyId)).toBe(shown);
  } finally {
    await td.close();
  }
});

const iso = (ms: number) => new Date(ms).toISOString();
