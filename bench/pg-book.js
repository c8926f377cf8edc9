// What booking a batch of settled calls costs PostgreSQL, without the gateway around it
// (issue #16): a fresh database with agw's schema, a daemon row and its slices, then
// `--clients` connections each booking batches of `--batch` calls for `--seconds` through
// the same function and payload the daemon uses (money/postgres/batches.ts). Prints PostgreSQL
// CPU (every server process, WAL writer included), WAL bytes and wall time per booked call.
// `npm run build && node bench/pg-book.js [--batch 20] [--clients 2] [--users 1] [--seconds 5] [--json]`
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PG_SERVER, benchBooking, onDatabase as on, postgresCpuMs, seedBooking } from './pg.js';
import { round } from './stats.js';
import { openAndMigrate } from '../dist/daemon/store/open.js';
import { PgBatcher } from '../dist/daemon/money/postgres/batches.js';
import { quotaPeriod } from '../dist/daemon/money/quotas.js';

const { values: a } = parseArgs({
  options: { batch: { type: 'string' }, clients: { type: 'string' }, users: { type: 'string' }, seconds: { type: 'string' }, sql: { type: 'string' }, json: { type: 'boolean' } },
});
const batchSize = Number(a.batch ?? 20);
const clients = Number(a.clients ?? 2);
const userCount = Number(a.users ?? 1);
const seconds = Number(a.seconds ?? 5);
const dbName = `agw_book_${process.pid}`;

const users = Array.from({ length: userCount }, (_, i) => ({ id: `usr_bench_${i}`, key: `key_bench_${i}` }));
let seq = 0;
const ID_PREFIX = process.pid.toString(16).padStart(12, '0');
// as calls.ts makes them: ascending
const booking = (u, now) => benchBooking(u, `use_${ID_PREFIX}${(++seq).toString(36).padStart(6, '0')}`, quotaPeriod(now).key, now);

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-bench-book-'));
try {
  await on('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
  await on('postgres', (c) => c.query(`CREATE DATABASE ${dbName}`));
  const url = `${PG_SERVER}/${dbName}`;
  const { db } = await openAndMigrate({ store: url, dataDir: tmp });
  // --sql FILE: SQL run after the migrations (to try a change to the schema or the function)
  if (a.sql) await on(dbName, (c) => c.query(readFileSync(a.sql, 'utf8')));
  const daemon = `dmn_bench_${process.pid}`;
  const now0 = Date.now();
  await on(dbName, (c) => seedBooking(c, daemon, users, now0));
  // one PgBatcher per client, each fed a whole batch at once (one agw_book call per batch)
  const consumed = { wallet: true, quota: true, budgets: [] };
  const pool = [];
  const fail = (o, m) => {
    console.error(m, o.err?.message ?? o);
    process.exit(1);
  };
  for (let i = 0; i < clients; i++) pool.push(new PgBatcher(db, { error: fail, warn: fail }, () => {}));
  const book = (batcher) => {
    const now = Date.now();
    return Promise.all(Array.from({ length: batchSize }, (_, j) => batcher.push(booking(users[(seq + j) % users.length], now), consumed, daemon)));
  };
  for (const b of pool) for (let i = 0; i < 20; i++) await book(b); // warm: plans cached
  const lsn0 = await on(dbName, async (c) => (await c.query('SELECT pg_current_wal_lsn() AS l')).rows[0].l);
  const cpu0 = postgresCpuMs();
  const t0 = performance.now();
  let booked = 0;
  await Promise.all(
    pool.map(async (b) => {
      while (performance.now() - t0 < seconds * 1000) {
        await book(b);
        booked += batchSize;
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpuMs = postgresCpuMs() - cpu0;
  const walBytes = await on(dbName, async (c) => Number((await c.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS d', [lsn0])).rows[0].d));
  const books = await on(dbName, async (c) => (await c.query("SELECT count(*)::int AS n, (SELECT count(*)::int FROM wallet_transactions WHERE type = 'usage') AS t FROM usage_records")).rows[0]);
  const out = {
    batch: batchSize,
    clients,
    users: userCount,
    booked,
    perSecond: round(booked / (wallMs / 1000), 0),
    pgCpuUsPerCall: round((cpuMs * 1000) / booked, 1),
    walBytesPerCall: round(walBytes / booked, 0),
    batchMs: round(wallMs / (booked / batchSize / clients), 2),
    recordsOk: books.n === booked + 20 * clients * batchSize,
  };
  await db.close();
  console.log(a.json ? JSON.stringify(out) : Object.entries(out).map(([k, v]) => `${k}: ${v}`).join('\n'));
} finally {
  await on('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)).catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
