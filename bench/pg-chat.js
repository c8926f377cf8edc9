// Scale-out (issue #16): the unified-chat scenario on one SQLite daemon and on 1, 2 and 3
// daemons sharing one PostgreSQL, each with one hot user and with 20 users, in one run;
// then 3 daemons under load with one SIGKILLed, and the books checked.
// `npm run build && node bench/pg-chat.js [--duration S] [--connections N] [--calls N]
//   [--async-commit] [--legs sqlite,x1,x2,x3,kill] [--rounds R] [--smoke] [--json]`
// --rounds R runs the load legs R times, interleaved (sqlite, x1, x2, x3, then again), and
// gives each target as the median of its R per-round ratios: on a shared machine one
// round's ratios swing by a third.
// Needs PostgreSQL (AGW_TEST_PG, default postgres://postgres@127.0.0.1:5432, trust auth,
// on this machine: its processes' CPU is read from /proc); each run makes and drops its
// own database. Figures are ratios against the SQLite leg of the same run.
import { mkdirSync, mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { runLoad } from './load.js';
import { PG_SERVER, onDatabase, postgresCpuMs } from './pg.js';
import { cpuMsOf, machineTicks, seedUser, seedUsers, startDaemonProcess, startMockProcess, writeAgwConfig } from './procs.js';
import { buildScenarios } from './scenarios.js';
import { runSequential } from './sequential.js';
import { median, round } from './stats.js';

const { values: a } = parseArgs({
  options: {
    duration: { type: 'string' },
    connections: { type: 'string' },
    calls: { type: 'string' },
    'async-commit': { type: 'boolean' },
    legs: { type: 'string' },
    rounds: { type: 'string' },
    smoke: { type: 'boolean' },
    json: { type: 'boolean' },
  },
});
const smoke = a.smoke === true;
const opts = {
  duration: Number(a.duration ?? (smoke ? 1 : 10)),
  connections: Number(a.connections ?? (smoke ? 10 : 48)),
  calls: Number(a.calls ?? (smoke ? 50 : 1000)),
  warmup: smoke ? 10 : 300,
  users: smoke ? 4 : 20,
};
const maintenance = (sql) => onDatabase('postgres', (c) => c.query(sql));
const PARAMS = a['async-commit'] ? '?options=-c%20synchronous_commit%3Doff' : '';
/** which legs run (all by default): sqlite, x1, x2, x3, kill */
const legs = new Set((a.legs ?? 'sqlite,x1,x2,x3,kill').split(','));
const rounds = Math.max(1, Number(a.rounds ?? 1));
const log = (m) => process.stderr.write(`[bench:pg] ${m}\n`);

/** The books of a PostgreSQL store: one finalized record, one debit and one quota unit per served call; no slice left. */
async function bookkeeping(url, userIds, ok) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const q = async (sql) => (await c.query(sql, [userIds])).rows[0];
    const u = await q(`SELECT COUNT(*) FILTER (WHERE status = 'finalized')::int AS fin, COALESCE(SUM(customer_cost_nusd) FILTER (WHERE status = 'finalized'), 0)::bigint AS cost
                         FROM usage_records WHERE user_id = ANY($1)`);
    const d = await q(`SELECT COUNT(*)::int AS n, COUNT(DISTINCT usage_id)::int AS distinct_n, COALESCE(-SUM(amount_nusd), 0)::bigint AS total
                         FROM wallet_transactions WHERE user_id = ANY($1) AND usage_id IS NOT NULL`);
    const qu = await q(`SELECT COALESCE(SUM(used), 0)::int AS used FROM quota_counters WHERE user_id = ANY($1) AND usage_type = 'ai_chat'`);
    const w = await q(`SELECT COALESCE(SUM(leased_nusd), 0)::bigint AS leased, COALESCE(MIN(balance_nusd), 0)::bigint AS min_balance FROM wallets WHERE user_id = ANY($1)`);
    const leases = (await c.query('SELECT COUNT(*)::int AS n FROM leases WHERE amount > 0')).rows[0].n;
    const pass =
      u.fin >= ok && d.n === u.fin && d.distinct_n === u.fin && qu.used === u.fin && d.total === u.cost && Number(w.leased) === 0 && leases === 0 && Number(w.min_balance) >= 0;
    return { pass, finalized: u.fin, answered: ok, debits: d.n, quotaUsed: qu.used, leftLeased: Number(w.leased), leaseRows: leases };
  } finally {
    await c.end();
  }
}

/** Autocannon over `daemons`, connections split between them, each cycling through `keys`. */
async function loadOver(urls, mockUrl, keys, { connections, duration }) {
  const per = Math.max(1, Math.round(connections / urls.length));
  const scs = urls.map((url) => {
    const sc = buildScenarios({ mock: mockUrl, forwarder: mockUrl, agw: url }, keys[0]).chat;
    return keys.length === 1 ? sc : { ...sc, requests: keys.map((k) => ({ headers: { ...sc.headers, authorization: `Bearer ${k}` } })) };
  });
  const results = await Promise.all(scs.map((sc) => runLoad(sc, { connections: per, duration })));
  return {
    rps: results.reduce((n, r) => n + r.rps, 0),
    p99: Math.max(...results.map((r) => r.p99)),
    ok: results.reduce((n, r) => n + r.ok, 0),
    errors: results.reduce((n, r) => n + r.errors + r.non2xx + r.timeouts, 0),
    cutOff: results.reduce((n, r) => n + r.cutOff, 0),
  };
}

/**
 * CPU ms of the daemons and of PostgreSQL spent while `fn` runs; how busy the machine was (in
 * cores: what is left idle a second daemon could use) and the busiest daemon (cores: near 1,
 * its one JavaScript thread is what limits it).
 */
async function measured(pids, fn) {
  const each0 = pids.map((p) => cpuMsOf(p) ?? 0);
  const p0 = postgresCpuMs();
  const m0 = machineTicks();
  const t0 = performance.now();
  const out = await fn();
  const wallMs = performance.now() - t0;
  const m1 = machineTicks();
  const each = pids.map((p, i) => (cpuMsOf(p) ?? 0) - each0[i]);
  return {
    ...out,
    daemonMs: each.reduce((n, x) => n + x, 0),
    postgresMs: postgresCpuMs() - p0,
    machineCores: ((m1.busy - m0.busy) / (m1.total - m0.total)) * os.cpus().length,
    daemonCores: Math.max(...each) / wallMs,
  };
}

const perCall = (ms, calls) => (calls ? round((ms * 1000) / calls, 1) : null); // µs (a tenth: the ratios are read to 1%)

/** One leg: `daemons` daemons on one store; sequential on the first; a hot user, then 20 users, over all. */
async function leg(name, mockUrl, tmp, { store, daemons, kill = false, round: r = 1 }) {
  const tag = rounds > 1 ? `${name}-r${r}` : name;
  const dataDir = join(tmp, tag);
  mkdirSync(dataDir);
  const configFile = writeAgwConfig(dataDir, mockUrl);
  if (store) appendFileSync(configFile, `store: "${store}"\n`);
  const hot = await seedUser(dataDir, configFile, { email: `${tag}@example.com`, password: 'bench-password-1' });
  const many = await seedUsers(dataDir, configFile, { prefix: tag, count: opts.users });
  const procs = [];
  const result = { name, round: r, daemons };
  try {
    for (let i = 0; i < daemons; i++) procs.push(await startDaemonProcess({ dataDir, configFile }));
    const pids = procs.map((p) => p.pid);
    const urls = procs.map((p) => p.url);
    if (!kill) {
      log(`${name}: sequential ${opts.calls} calls`);
      const seq = await runSequential(buildScenarios({ mock: mockUrl, forwarder: mockUrl, agw: urls[0] }, hot.key).chat, opts);
      result.seqP50 = round(seq.p50);
      result.seqP99 = round(seq.p99);
      result.seqOk = seq.ok;
      log(`${name}: one hot user, ${opts.connections} connections for ${opts.duration}s`);
      const h = await measured(pids, () => loadOver(urls, mockUrl, [hot.key], opts));
      log(`${name}: ${opts.users} users`);
      const m = await measured(pids, () => loadOver(urls, mockUrl, many.map((u) => u.key), opts));
      Object.assign(result, {
        hotRps: round(h.rps, 1),
        hotP99: h.p99,
        manyRps: round(m.rps, 1),
        manyP99: m.p99,
        daemonCpuUs: perCall(h.daemonMs + m.daemonMs, h.ok + m.ok),
        machineCores: round((h.machineCores + m.machineCores) / 2, 2),
        daemonCores: round(Math.max(h.daemonCores, m.daemonCores), 2),
        postgresCpuUs: store ? perCall(h.postgresMs + m.postgresMs, h.ok + m.ok) : 0,
        errors: seq.failed + h.errors + m.errors,
        ok: seq.ok + h.ok + m.ok,
        cutOff: h.cutOff + m.cutOff,
      });
    } else {
      log(`${name}: ${opts.users} users over ${daemons} daemons for ${opts.duration}s, the last daemon SIGKILLed a third of the way in`);
      const running = loadOver(urls, mockUrl, many.map((u) => u.key), opts);
      await new Promise((r) => setTimeout(r, (opts.duration * 1000) / 3));
      await procs[daemons - 1].stop('SIGKILL');
      const l = await running;
      Object.assign(result, { manyRps: round(l.rps, 1), ok: l.ok, cutOff: l.cutOff, killedErrors: l.errors });
    }
    // calls autocannon cut off may still be settling: let them; a killed daemon's slices come back after the lease TTL
    await new Promise((r) => setTimeout(r, kill ? 12_000 : 1500));
    await Promise.all(procs.map((p) => p.stop()));
    if (store) result.bookkeeping = await bookkeeping(store, [hot.id, ...many.map((u) => u.id)], result.ok);
    return result;
  } finally {
    await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  }
}

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-bench-pg-'));
const db = `agw_bench_${process.pid}`;
const results = { machine: { cores: os.cpus().length, node: process.versions.node, asyncCommit: Boolean(a['async-commit']) }, options: opts, legs: [], problems: [] };
let mock;
try {
  mock = await startMockProcess();
  const onPostgres = async (name, daemons, o) => {
    await maintenance(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await maintenance(`CREATE DATABASE ${db}`);
    results.legs.push(await leg(name, mock.url, tmp, { store: `${PG_SERVER}/${db}${PARAMS}`, daemons, ...o }));
  };
  for (let r = 1; r <= rounds; r++) {
    if (legs.has('sqlite')) results.legs.push(await leg('sqlite', mock.url, tmp, { daemons: 1, round: r }));
    for (const [name, daemons] of [['postgres-x1', 1], ['postgres-x2', 2], ['postgres-x3', 3]]) {
      if (legs.has(name.replace('postgres-', ''))) await onPostgres(name, daemons, { round: r });
    }
  }
  if (legs.has('kill')) await onPostgres('postgres-x3-kill', 3, { kill: true });
} catch (e) {
  results.problems.push(String(e?.stack ?? e));
} finally {
  await mock?.stop().catch(() => {});
  await maintenance(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`).catch(() => {});
  rmSync(tmp, { recursive: true, force: true });
}
for (const l of results.legs) {
  const which = rounds > 1 && !l.name.endsWith('kill') ? `${l.name} (round ${l.round})` : l.name;
  if (l.errors > 0) results.problems.push(`${which}: ${l.errors} errors`);
  if (l.bookkeeping && !l.bookkeeping.pass) results.problems.push(`${which}: bookkeeping mismatch ${JSON.stringify(l.bookkeeping)}`);
}
const ratio = (x, y) => (x && y ? round(x / y, 3) : null);
/** The targets of one round's legs. */
function targetsOf(roundLegs) {
  const byName = Object.fromEntries(roundLegs.map((l) => [l.name, l]));
  const sq = byName.sqlite;
  const p1 = byName['postgres-x1'];
  const p2 = byName['postgres-x2'];
  const p3 = byName['postgres-x3'];
  if (!sq || !p1 || !p2) return [];
  return [
    ['PostgreSQL x1 / SQLite, hot user rps', ratio(p1.hotRps, sq.hotRps), '>= 0.7'],
    ['PostgreSQL x1 / SQLite, 20 users rps', ratio(p1.manyRps, sq.manyRps), '>= 0.7'],
    ['PostgreSQL x1 / SQLite, sequential p50', ratio(p1.seqP50, sq.seqP50), '<= 2'],
    ['PostgreSQL x2 / x1, hot user rps', ratio(p2.hotRps, p1.hotRps), '>= 1.0'],
    ['PostgreSQL x2 / x1, 20 users rps', ratio(p2.manyRps, p1.manyRps), '>= 1.0'],
    ['PostgreSQL CPU / daemon CPU per call, x1', ratio(p1.postgresCpuUs, p1.daemonCpuUs), '<= 0.3'],
    ['PostgreSQL CPU / daemon CPU per call, x2', ratio(p2.postgresCpuUs, p2.daemonCpuUs), '<= 0.3'],
    ...(p3 ? [['PostgreSQL x3 / x1, 20 users rps', ratio(p3.manyRps, p1.manyRps), '(2 cores)']] : []),
  ];
}
const perRound = Array.from({ length: rounds }, (_, i) => targetsOf(results.legs.filter((l) => l.round === i + 1)));
// each target: the median of its rounds' ratios (and, with several rounds, the ratios themselves)
results.targets = perRound[0].map(([label, , target], i) => {
  const values = perRound.map((t) => t[i]?.[1]).filter((v) => v !== null && v !== undefined);
  return rounds > 1 ? [label, values.length ? round(median(values), 3) : null, target, values] : [label, values[0] ?? null, target];
});
results.ok = results.problems.length === 0;

if (a.json) process.stdout.write(JSON.stringify(results, null, 2) + '\n');
else {
  const cols = ['name', 'round', 'daemons', 'seqP50', 'seqP99', 'hotRps', 'hotP99', 'manyRps', 'manyP99', 'daemonCpuUs', 'postgresCpuUs', 'machineCores', 'daemonCores', 'errors'];
  const rows = [['leg', 'round', 'daemons', 'seq p50 ms', 'seq p99 ms', 'hot rps', 'hot p99', '20u rps', '20u p99', 'daemon µs/call', 'pg µs/call', 'cores busy', 'daemon cores', 'errors', 'books']];
  for (const l of results.legs) rows.push([...cols.map((c) => String(l[c] ?? '-')), l.bookkeeping ? (l.bookkeeping.pass ? 'ok' : 'MISMATCH') : '-']);
  const w = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  process.stdout.write(rows.map((r) => r.map((c, i) => String(c).padEnd(w[i])).join('  ')).join('\n') + '\n\n');
  if (rounds > 1) process.stdout.write(`median of ${rounds} rounds (each round's ratio in brackets)\n`);
  for (const [label, value, target, values] of results.targets) {
    process.stdout.write(`${label.padEnd(44)} ${String(value).padStart(7)} x  ${target.padEnd(9)}${values ? ` [${values.join(', ')}]` : ''}\n`);
  }
  for (const p of results.problems) process.stdout.write(`problem: ${p}\n`);
}
process.exitCode = results.ok ? 0 : 1;
