// The unified-chat scenario on both stores (issue #8): what the shared PostgreSQL store
// costs against the embedded SQLite one, and what a second daemon on the same database
// adds. `npm run build && node bench/pg-chat.js [--duration S] [--connections N] [--calls N] [--smoke] [--json]`
// Needs PostgreSQL (AGW_TEST_PG, default postgres://postgres@127.0.0.1:5432, trust auth);
// each run creates and drops its own database.
import { mkdirSync, mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { runLoad } from './load.js';
import { seedUser, startDaemonProcess, startMockProcess, writeAgwConfig } from './procs.js';
import { buildScenarios } from './scenarios.js';
import { runSequential } from './sequential.js';
import { round } from './stats.js';

const { values: a } = parseArgs({
  options: {
    duration: { type: 'string' },
    connections: { type: 'string' },
    calls: { type: 'string' },
    smoke: { type: 'boolean' },
    json: { type: 'boolean' },
  },
});
const smoke = a.smoke === true;
const opts = {
  duration: Number(a.duration ?? (smoke ? 1 : 10)),
  connections: Number(a.connections ?? (smoke ? 10 : 50)),
  calls: Number(a.calls ?? (smoke ? 50 : 1000)),
  warmup: smoke ? 10 : 200,
};
const SERVER = (process.env.AGW_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');
const log = (m) => process.stderr.write(`[bench:pg] ${m}\n`);

async function maintenance(sql) {
  const c = new pg.Client({ connectionString: `${SERVER}/postgres` });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** The money check on PostgreSQL: one finalized record, one debit and one quota unit per 2xx. */
async function bookkeeping(url, userId, ok) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const q = async (sql) => (await c.query(sql, [userId])).rows[0];
    const u = await q(`SELECT COUNT(*) FILTER (WHERE status = 'finalized')::int AS fin, COUNT(*) FILTER (WHERE status = 'reserved')::int AS res,
                              COALESCE(SUM(customer_cost_nusd) FILTER (WHERE status = 'finalized'), 0)::bigint AS cost FROM usage_records WHERE user_id = $1`);
    const d = await q(`SELECT COUNT(*)::int AS n, COUNT(DISTINCT usage_id)::int AS distinct_n, COALESCE(-SUM(amount_nusd), 0)::bigint AS total
                         FROM wallet_transactions WHERE user_id = $1 AND usage_id IS NOT NULL`);
    const qu = await q(`SELECT COALESCE(SUM(used), 0)::int AS used FROM quota_counters WHERE user_id = $1 AND usage_type = 'ai_chat'`);
    const pass = u.fin >= ok && d.n === u.fin && d.distinct_n === u.fin && qu.used === u.fin && u.res === 0 && d.total === u.cost;
    return { pass, finalized: u.fin, debits: d.n, quotaUsed: qu.used, reserved: u.res };
  } finally {
    await c.end();
  }
}

/** One leg: `daemons` daemons on one store, the chat scenario sequentially (first daemon) and under load (split over all). */
async function leg(name, mockUrl, tmp, { store, daemons }) {
  const dataDir = join(tmp, name);
  mkdirSync(dataDir);
  const configFile = writeAgwConfig(dataDir, mockUrl);
  if (store) appendFileSync(configFile, `store: "${store}"\n`);
  const user = await seedUser(dataDir, configFile, { email: `${name}@example.com`, password: 'bench-password-1' });
  const procs = [];
  try {
    for (let i = 0; i < daemons; i++) procs.push(await startDaemonProcess({ dataDir, configFile }));
    const scs = procs.map((p) => buildScenarios({ mock: mockUrl, forwarder: mockUrl, agw: p.url }, user.key).chat);
    log(`${name}: sequential ${opts.calls} calls`);
    const seq = await runSequential(scs[0], opts);
    log(`${name}: load ${opts.connections} connections for ${opts.duration}s over ${daemons} daemon(s)`);
    const per = Math.max(1, Math.round(opts.connections / daemons));
    const loads = await Promise.all(scs.map((sc) => runLoad(sc, { connections: per, duration: opts.duration })));
    const ok = seq.ok + loads.reduce((n, l) => n + l.ok, 0);
    const cutOff = loads.reduce((n, l) => n + l.cutOff, 0);
    // calls autocannon cut off at the end may still be running in the daemon: let them settle
    await new Promise((r) => setTimeout(r, 1500));
    await Promise.all(procs.map((p) => p.stop()));
    const books = store ? await bookkeeping(store, user.id, ok) : null;
    return {
      name,
      daemons,
      seqP50: round(seq.p50),
      seqP99: round(seq.p99),
      rps: round(loads.reduce((n, l) => n + l.rps, 0), 1),
      loadP50: Math.max(...loads.map((l) => l.p50)),
      loadP99: Math.max(...loads.map((l) => l.p99)),
      errors: seq.failed + loads.reduce((n, l) => n + l.errors + l.non2xx + l.timeouts, 0),
      cutOff,
      bookkeeping: books,
    };
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  }
}

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-bench-pg-'));
const db = `agw_bench_${process.pid}`;
const results = { machine: { cores: os.cpus().length, node: process.versions.node }, options: opts, legs: [], problems: [] };
let mock;
try {
  mock = await startMockProcess();
  results.legs.push(await leg('sqlite', mock.url, tmp, { daemons: 1 }));
  const legs = [
    ['postgres', '', 1],
    // the durability SQLite's WAL with synchronous=NORMAL gives: commits are not flushed one by one
    ['postgres-async-commit', '?options=-c%20synchronous_commit%3Doff', 1],
    ['postgres-x2', '', 2],
  ];
  for (const [name, params, daemons] of legs) {
    await maintenance(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await maintenance(`CREATE DATABASE ${db}`);
    results.legs.push(await leg(name, mock.url, tmp, { store: `${SERVER}/${db}${params}`, daemons }));
  }
} catch (e) {
  results.problems.push(String(e?.stack ?? e));
} finally {
  await mock?.stop().catch(() => {});
  await maintenance(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
for (const l of results.legs) {
  if (l.errors > 0) results.problems.push(`${l.name}: ${l.errors} errors`);
  if (l.bookkeeping && !l.bookkeeping.pass) results.problems.push(`${l.name}: bookkeeping mismatch ${JSON.stringify(l.bookkeeping)}`);
}
results.ok = results.problems.length === 0;

if (a.json) process.stdout.write(JSON.stringify(results, null, 2) + '\n');
else {
  const rows = [['leg', 'daemons', 'seq p50 ms', 'seq p99 ms', 'req/s', 'load p50 ms', 'load p99 ms', 'errors', 'books']];
  for (const l of results.legs) {
    rows.push([l.name, l.daemons, l.seqP50, l.seqP99, l.rps, l.loadP50, l.loadP99, l.errors, l.bookkeeping ? (l.bookkeeping.pass ? 'ok' : 'MISMATCH') : '-'].map(String));
  }
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  process.stdout.write(rows.map((r) => r.map((c, i) => String(c).padEnd(w[i])).join('  ')).join('\n') + '\n');
  for (const p of results.problems) process.stdout.write(`problem: ${p}\n`);
}
process.exitCode = results.ok ? 0 : 1;
