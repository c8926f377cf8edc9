// A/B of two agw daemons on sequential latency (issue #32): which of two builds, or two sets of
// node flags or environment variables, adds less to a call, on a machine whose speed drifts.
//   npm run build && node bench/ab.js [--b-bin DIR/bin/agw.js] [--b-flags "..."] [--b-env "K=V ..."]
//                                     [--a-flags ...] [--a-env ...] [--scenario chat|proxy]
//                                     [--rounds 20] [--block 300] [--fastify-floor]
// The mock upstream, the accounting floor (servers.js startFloor) and two daemons, each on its
// own fresh store, answer blocks of `block` sequential calls in turn (direct, floor, A, B; B
// before A every other round), so a drift of the machine's speed within a run touches every
// arm alike. Per round: each arm's added p50 (its p50 minus direct's); the result is the median
// of the per-round ratios B/A and each daemon's added latency over the floor's. On a machine
// whose speed drifts, runs of the same pair still spread by several per cent (±7% on the
// 2026-11-27 PVM machine): compare the median of several runs. --fastify-floor adds one arm:
// the floor's calls behind fastify (servers.js startFastifyFloor), what the framework adds.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { seedUser, startDaemonProcess, startFastifyFloorProcess, startFloorProcess, startMockProcess, writeAgwConfig, AGW_BIN } from './procs.js';
import { buildScenarios } from './scenarios.js';
import { runSequential } from './sequential.js';
import { median } from './stats.js';

const opt = { type: 'string' };
const { values: a } = parseArgs({
  options: { 'a-flags': opt, 'b-flags': opt, 'a-env': opt, 'b-env': opt, 'a-bin': opt, 'b-bin': opt, scenario: opt, rounds: opt, block: opt, 'fastify-floor': { type: 'boolean' }, json: { type: 'boolean' } },
});
const ROUNDS = Number(a.rounds ?? 20);
const BLOCK = Number(a.block ?? 300);
const SCENARIO = a.scenario ?? 'chat';
if (!['chat', 'proxy'].includes(SCENARIO) || !(ROUNDS > 0) || !(BLOCK > 0)) {
  process.stderr.write('usage: node bench/ab.js [--b-bin PATH] [--b-flags "..."] [--b-env "K=V ..."] [--a-…] [--scenario chat|proxy] [--rounds N] [--block N] [--fastify-floor]\n');
  process.exit(2);
}
const words = (s) => (s ? s.split(/\s+/).filter(Boolean) : []);
const envOf = (s) => Object.fromEntries(words(s).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
const log = (m) => process.stderr.write(`[ab] ${m}\n`);

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-ab-'));
const procs = [];
try {
  const mock = await startMockProcess();
  procs.push(mock);
  const floor = await startFloorProcess(mock.url, join(tmp, 'floor.journal'));
  procs.push(floor);
  const daemon = async (arm) => {
    const dataDir = join(tmp, arm);
    mkdirSync(dataDir);
    const user = await seedUser(dataDir, writeAgwConfig(dataDir, 'http://127.0.0.1:9'), { email: `${arm}@example.com`, password: 'bench-password-1' });
    const bin = a[`${arm}-bin`] ? resolve(a[`${arm}-bin`]) : AGW_BIN;
    const d = await startDaemonProcess({ dataDir, configFile: writeAgwConfig(dataDir, mock.url), nodeFlags: words(a[`${arm}-flags`]), env: envOf(a[`${arm}-env`]), bin });
    procs.push(d);
    return buildScenarios({ mock: mock.url, forwarder: mock.url, floor: floor.url, agw: d.url }, user.key)[SCENARIO];
  };
  const A = await daemon('a');
  const B = await daemon('b');
  const base = buildScenarios({ mock: mock.url, forwarder: mock.url, floor: floor.url, agw: mock.url }, '');
  const arms = { direct: base.direct, floor: base.floor, A, B };
  if (a['fastify-floor']) {
    const ff = await startFastifyFloorProcess(mock.url, join(tmp, 'floor-fastify.journal'));
    procs.push(ff);
    arms.fastifyFloor = { ...base.floor, origin: ff.url };
  }
  // the floors in turn as A and B are: fastifyFloor is compared with the floor
  const floors = Object.keys(arms).filter((k) => k !== 'direct' && k !== 'A' && k !== 'B');
  log(`warm-up, then ${ROUNDS} rounds of ${BLOCK} ${SCENARIO} calls per arm`);
  for (const sc of Object.values(arms)) await runSequential(sc, { calls: 500, warmup: 1500 });
  const p50 = Object.fromEntries(Object.keys(arms).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of r % 2 ? ['direct', ...[...floors].reverse(), 'B', 'A'] : ['direct', ...floors, 'A', 'B']) {
      const q = await runSequential(arms[k], { calls: BLOCK, warmup: 0 });
      if (q.failed) throw new Error(`${k}: ${q.failed} calls failed (${q.firstError})`);
      p50[k].push(q.p50 * 1000);
    }
  }
  const added = (k) => p50[k].map((x, i) => x - p50.direct[i]);
  const ratio = (num, den) => median(added(num).map((x, i) => x / added(den)[i]));
  const out = {
    options: { scenario: SCENARIO, rounds: ROUNDS, block: BLOCK, a: { flags: a['a-flags'] ?? '', env: a['a-env'] ?? '', bin: a['a-bin'] ?? AGW_BIN }, b: { flags: a['b-flags'] ?? '', env: a['b-env'] ?? '', bin: a['b-bin'] ?? AGW_BIN } },
    addedUs: Object.fromEntries([...floors, 'A', 'B'].map((k) => [k, round(median(added(k)), 1)])),
    aOverFloor: round(ratio('A', 'floor'), 3),
    bOverFloor: round(ratio('B', 'floor'), 3),
    bOverA: round(ratio('B', 'A'), 3),
    ...(arms.fastifyFloor ? { fastifyOverFloorUs: round(median(added('fastifyFloor').map((x, i) => x - added('floor')[i])), 1) } : {}),
  };
  if (a.json) console.log(JSON.stringify(out, null, 2));
  else {
    console.log(`${SCENARIO}, ${ROUNDS} rounds of ${BLOCK} sequential calls; added p50 (µs, median of rounds): floor ${out.addedUs.floor}, A ${out.addedUs.A}, B ${out.addedUs.B}`);
    console.log(`added latency over the floor's: A ${out.aOverFloor}x, B ${out.bOverFloor}x; B over A: ${out.bOverA}x (median of per-round ratios)`);
    if (out.fastifyOverFloorUs !== undefined) console.log(`the floor behind fastify: ${out.fastifyOverFloorUs} µs more than the floor on node:http (median of per-round differences)`);
  }
} finally {
  for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
}

function round(x, d) {
  const f = 10 ** d;
  return Math.round(x * f) / f;
}
