import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { moneyOf } from '../../src/daemon/money/index.js';
import type { PgMoney } from '../../src/daemon/money/postgres/engine.js';
import { potNames } from '../../src/daemon/money/postgres/pots.js';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';
import { PgRelay } from '../helpers/pg-relay.js';

/**
 * A streamed call is served before its booking. When PostgreSQL is out of reach at its
 * end for longer than a batch retries (2 s), the booking goes to a spool file in the data
 * directory, synced before the stream ends, and is booked once PostgreSQL is back: the
 * call is billed once, never for free (money/postgres/spool.ts).
 */
let tdb: TestDatabase;
let relay: PgRelay;
let g: GatewayFixture;
let admin: pg.Client;

beforeAll(async () => {
  tdb = await createTestDatabase();
  relay = new PgRelay();
  await relay.start();
  g = await startGatewayFixture({ store: `${relay.through(tdb.url)}?connect_timeout=1&pool_max=3`, chunkDelayMs: 100 });
  admin = new pg.Client({ connectionString: tdb.url }); // not through the relay
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await relay?.start(); // so the daemon stops cleanly
  await g?.close();
  await relay?.cut().catch(() => {});
  await tdb?.drop();
});

async function until(check: () => Promise<boolean> | boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const spoolDir = () => join(g.d.dataDir, 'pg-spool');
interface Line {
  b: { id: string; stream: boolean };
  epoch: string;
}
/** The bookings in the spool files, once each (a round may be renaming a file meanwhile: read again). */
function spooled(): Line['b'][] {
  for (;;) {
    try {
      const files = readdirSync(spoolDir()).filter((f) => f.endsWith('.jsonl'));
      const lines = files.flatMap((f) => readFileSync(join(spoolDir(), f), 'utf8').split('\n').filter(Boolean)).map((l) => JSON.parse(l) as Line);
      return [...new Map(lines.map((l) => [l.b.id, l.b])).values()];
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      if (!existsSync(spoolDir())) return [];
    }
  }
}

/** the booking the first test spooled, as it was written */
let first: Line['b'];

test('a stream whose booking PostgreSQL cannot take is spooled to disk, ends normally, and is booked once when the database is back', async () => {
  const u = await g.d.user({ tier: 'pro', balance: 3 });
  const res = await g.d.fetch('/gateway/chat', {
    method: 'POST',
    key: u.key,
    json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello there' }], max_tokens: 200, stream: true },
  });
  expect(res.status).toBe(200);
  const id = res.headers.get('x-request-id')!;
  const reader = res.body!.getReader();
  await reader.read(); // the first chunk is out
  await relay.cut(); // and the database goes away

  let text = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  expect(text).toContain('[DONE]'); // the caller got the whole answer
  expect(spooled().map((b) => [b.id, b.stream])).toEqual([[id, true]]);
  [first] = spooled();
  // what the call spent of this daemon's wallet slice stays spoken for until it is booked
  const pot = () => ((moneyOf(g.d.daemon.ctx) as unknown as Promise<PgMoney>).then((m) => m.slices.pots.get(potNames.wallet(u.id))!));
  expect((await pot()).pending).toBe((first as unknown as { customerNano: number }).customerNano);
  expect((await admin.query('SELECT count(*)::int AS n FROM usage_records WHERE id = $1', [id])).rows[0].n).toBe(0);

  await relay.start(); // same port: the daemon's pool reconnects, the spool is tried again
  await until(async () => (await admin.query('SELECT count(*)::int AS n FROM usage_records WHERE id = $1', [id])).rows[0].n === 1, 20_000);
  const tx = (
    await admin.query(
      'SELECT count(*)::int AS n, coalesce(-sum(amount_nusd), 0)::bigint AS total, coalesce(sum(allowance_nusd), 0)::bigint AS allowance FROM wallet_transactions WHERE usage_id = $1',
      [id],
    )
  ).rows[0];
  expect(tx.n).toBe(1);
  expect(Number(tx.total)).toBeGreaterThan(0);
  const rec = (await admin.query('SELECT customer_cost_nusd, status FROM usage_records WHERE id = $1', [id])).rows[0];
  expect(rec).toMatchObject({ status: 'finalized' });
  expect(Number(rec.customer_cost_nusd)).toBe(Number(tx.total));
  // the charge came from the month's allowance first, the rest from the balance
  const wallet = (await admin.query('SELECT balance_nusd, allowance_used_nusd FROM wallets WHERE user_id = $1', [u.id])).rows[0];
  expect(Number(wallet.allowance_used_nusd)).toBe(Number(tx.allowance));
  expect(Number(wallet.balance_nusd)).toBe(3_000_000_000 - (Number(tx.total) - Number(tx.allowance)));
  await until(() => spooled().length === 0, 10_000);
  expect(readdirSync(spoolDir()).filter((f) => f.endsWith('.jsonl'))).toEqual([]);
  expect((await pot()).pending).toBe(0); // and then taken off the slice, not given back to it
});

test("the spool files of a daemon that stopped are taken over and booked (a torn line skipped, a booking already stored not charged twice); a live daemon's are left alone", async () => {
  const again = first; // booked already
  const fresh = { ...first, id: `${first.id}x` };
  mkdirSync(spoolDir(), { recursive: true });
  // a daemon that left no sign of life: its file is taken over (one already booked, one new, a torn line)
  const line = (b: unknown) => JSON.stringify({ b, consumed: { wallet: false, quota: false, budgets: [] }, epoch: 'dmn_gone' });
  writeFileSync(join(spoolDir(), 'a-daemon-gone.jsonl'), `${line(again)}\n${line(fresh)}\n{"b":{"id":"use_torn","us`);
  // and one that is alive (its mark is fresh): its file is left alone
  writeFileSync(join(spoolDir(), 'a-daemon-alive.alive'), '');
  writeFileSync(join(spoolDir(), 'a-daemon-alive.jsonl'), `${line({ ...first, id: `${first.id}y` })}\n`);
  await until(async () => (await admin.query('SELECT count(*)::int AS n FROM usage_records WHERE id = $1', [fresh.id])).rows[0].n === 1, 15_000);
  await until(() => !readdirSync(spoolDir()).includes('a-daemon-gone.jsonl') && spooled().length === 1, 10_000);
  await new Promise((r) => setTimeout(r, 6000)); // another round: the live daemon's file is still there, unbooked
  expect(spooled().map((b) => b.id)).toEqual([`${first.id}y`]);
  expect(readdirSync(spoolDir())).toContain('a-daemon-alive.jsonl');
  const debits = (await admin.query('SELECT usage_id FROM wallet_transactions WHERE usage_id = ANY ($1) ORDER BY usage_id', [[again.id, fresh.id, 'use_torn']])).rows;
  expect(debits.map((r) => r.usage_id)).toEqual([again.id, fresh.id]);
  expect((await admin.query('SELECT count(*)::int AS n FROM usage_records WHERE id = $1', [`${first.id}y`])).rows[0].n).toBe(0);
});
