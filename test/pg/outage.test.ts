import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { PgRelay } from '../helpers/pg-relay.js';

/**
 * The database going away under a running daemon: requests answer 503 STORE_UNAVAILABLE
 * (with Retry-After) within the connect timeout instead of hanging or 500, and the pool
 * recovers by itself when the database is back. The daemon reaches PostgreSQL through a
 * TCP relay that the test can cut.
 */
let tdb: TestDatabase;
let relay: PgRelay;
let d: TestDaemon;

beforeAll(async () => {
  tdb = await createTestDatabase();
  relay = new PgRelay();
  await relay.start();
  const store = relay.through(tdb.url);
  expect(store).toContain(`:${relay.port}/`);
  d = await startTestDaemon({ store: `${store}?connect_timeout=1&pool_max=3` });
});

afterAll(async () => {
  await d?.close();
  await relay?.cut().catch(() => {});
  await tdb?.drop();
});

test('with the database gone, requests answer 503 STORE_UNAVAILABLE quickly; when it is back the daemon serves again', async () => {
  const u = await d.user({ tier: 'pro', balance: 3 });
  expect((await d.fetch('/wallet', { key: u.key })).status).toBe(200);

  await relay.cut();
  for (const path of ['/wallet', '/healthz']) {
    const t0 = Date.now();
    const r = await d.fetch(path, { key: u.key });
    expect(r.status, path).toBe(503);
    expect(await r.json()).toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(r.headers.get('retry-after')).toBe('1');
    expect(Date.now() - t0).toBeLessThan(3000);
  }

  await relay.start(); // same port
  const back = await d.fetch('/wallet', { key: u.key });
  expect(back.status).toBe(200);
  expect(await back.json()).toMatchObject({ balance: 3 });
});
