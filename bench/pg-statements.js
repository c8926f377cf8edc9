// What one gateway call costs PostgreSQL, statement by statement (issue #16: "find out
// first"). Runs one or more daemons on a fresh database, drives unified chat for a hot
// user, and reads pg_stat_statements (calls, time, rows, blocks, WAL) for that database,
// per gateway call. Needs `shared_preload_libraries = 'pg_stat_statements'` on the
// server and the extension in the `postgres` database (CREATE EXTENSION
// pg_stat_statements). `npm run build && node bench/pg-statements.js [--daemons N]
// [--duration S] [--connections N] [--sequential] [--json]`
import { mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PG_SERVER, onDatabase as on } from './pg.js';
import { runLoad } from './load.js';
import { seedUser, startDaemonProcess, startMockProcess, writeAgwConfig } from './procs.js';
import { buildScenarios } from './scenarios.js';
import { runSequential } from './sequential.js';
import { round } from './stats.js';

const { values: a } = parseArgs({
  options: { daemons: { type: 'string' }, duration: { type: 'string' }, connections: { type: 'string' }, sequential: { type: 'boolean' }, json: { type: 'boolean' } },
});
const dbName = `agw_stmts_${process.pid}`;
const daemons = Number(a.daemons ?? 1);

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-bench-stmts-'));
const procs = [];
let mock;
try {
  await on('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
  await on('postgres', (c) => c.query(`CREATE DATABASE ${dbName}`));
  mock = await startMockProcess();
  const configFile = writeAgwConfig(tmp, mock.url);
  appendFileSync(configFile, `store: "${PG_SERVER}/${dbName}"\n`);
  const user = await seedUser(tmp, configFile, { email: 'stmts@example.com', password: 'bench-password-1' });
  for (let i = 0; i < daemons; i++) procs.push(await startDaemonProcess({ dataDir: tmp, configFile }));
  const scs = procs.map((p) => buildScenarios({ mock: mock.url, forwarder: mock.url, agw: p.url }, user.key).chat);
  // warm up (leases taken, statements prepared), then count from zero
  await runSequential(scs[0], { calls: 200, warmup: 0 });
  const dbid = await on('postgres', async (c) => (await c.query('SELECT oid FROM pg_database WHERE datname = $1', [dbName])).rows[0].oid);
  await on('postgres', (c) => c.query('SELECT pg_stat_statements_reset()'));
  const lockWaits0 = await on(dbName, async (c) => Number((await c.query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")).rows[0].deadlocks));
  let ok;
  if (a.sequential) ok = (await runSequential(scs[0], { calls: 2000, warmup: 0 })).ok;
  else {
    const per = Math.max(1, Math.round(Number(a.connections ?? 48) / daemons));
    const loads = await Promise.all(scs.map((sc) => runLoad(sc, { connections: per, duration: Number(a.duration ?? 10) })));
    ok = loads.reduce((n, l) => n + l.ok, 0);
  }
  await new Promise((r) => setTimeout(r, 1000));
  const rows = await on('postgres', async (c) =>
    (
      await c.query(
        `SELECT query, toplevel, calls, total_exec_time, rows, shared_blks_hit, shared_blks_read, shared_blks_dirtied, shared_blks_written, wal_records, wal_bytes
           FROM pg_stat_statements WHERE dbid = $1 ORDER BY toplevel DESC, total_exec_time DESC`,
        [dbid],
      )
    ).rows,
  );
  const deadlocks = (await on(dbName, async (c) => Number((await c.query("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")).rows[0].deadlocks))) - lockWaits0;
  const per = (x) => round(Number(x) / ok, 3);
  const statements = rows
    .filter((r) => !/pg_stat_statements|pg_database/.test(r.query))
    .map((r) => ({
      top: r.toplevel,
      query: r.query.replace(/\s+/g, ' ').slice(0, 110),
      perCall: per(r.calls),
      msPerCall: round((Number(r.total_exec_time) / ok), 4),
      rowsPerCall: per(r.rows),
      dirtiedPerCall: per(r.shared_blks_dirtied),
      walBytesPerCall: per(r.wal_bytes),
    }));
  // round trips are the top-level statements; the time of a function includes its statements'
  const top = statements.filter((s) => s.top);
  const sum = (k) => round(top.reduce((n, s) => n + s[k], 0), 3);
  const out = {
    daemons,
    mode: a.sequential ? 'sequential' : 'load',
    calls: ok,
    deadlocks,
    perCall: {
      roundTrips: sum('perCall'),
      execMs: sum('msPerCall'),
      rowsWritten: round(statements.filter((s) => /^\s*(insert|update|delete)/i.test(s.query)).reduce((n, s) => n + s.rowsPerCall, 0), 3),
      dirtiedBlocks: sum('dirtiedPerCall'),
      walBytes: sum('walBytesPerCall'),
    },
    statements,
  };
  if (a.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  else {
    process.stdout.write(`${out.calls} gateway calls, ${daemons} daemon(s), ${out.mode}; per call: ${JSON.stringify(out.perCall)}; deadlocks ${deadlocks}\n`);
    for (const s of statements.slice(0, 30)) {
      process.stdout.write(`${s.top ? 'trip ' : '  in '}${String(s.perCall).padStart(7)} x  ${String(s.msPerCall).padStart(8)} ms  ${String(s.rowsPerCall).padStart(6)} rows  ${String(s.walBytesPerCall).padStart(7)} B WAL  ${s.query}\n`);
    }
  }
} finally {
  await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  await mock?.stop().catch(() => {});
  await on('postgres', (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)).catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
