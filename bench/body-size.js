// What a call's body size costs (issue #32): agw's added latency against the forwarder's and
// the accounting floor's as the conversation a call carries grows, as a coding agent's does
// (its whole history on every turn).
//   npm run build && node bench/body-size.js [--kb 1,10,100] [--rounds 5] [--block 200] [--json]
// The mock upstream, the bare forwarder, the accounting floor and an agw daemon answer blocks
// of `block` sequential calls in turn (direct, forwarder, floor, proxy, chat), round by
// round, for each body size (scenarios.js withHistory: plain text turns, no images). Each
// figure is the median of the rounds' p50s; "added" is a p50 minus direct's. The forwarder
// streams a body through as it arrives; the floor and agw read it whole before they call
// upstream, as any gateway that prices a call from its body must.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seedUser, startDaemonProcess, startFloorProcess, startForwarderProcess, startMockProcess, writeAgwConfig } from './procs.js';
import { buildScenarios, withHistory } from './scenarios.js';
import { runSequential } from './sequential.js';
import { median } from './stats.js';

const USAGE = 'usage: node bench/body-size.js [--kb 1,10,100] [--rounds N] [--block N] [--json]';
let a;
try {
  ({ values: a } = parseArgs({ options: { kb: { type: 'string' }, rounds: { type: 'string' }, block: { type: 'string' }, json: { type: 'boolean' } } }));
} catch (e) {
  console.error(`${e.message}\n${USAGE}`);
  process.exit(2);
}
const SIZES = (a.kb ?? '1,10,100').split(',').map(Number);
const ROUNDS = Number(a.rounds ?? 5);
const BLOCK = Number(a.block ?? 200);
if (!SIZES.every((n) => Number.isInteger(n) && n > 0 && n <= 4096) || !(Number.isInteger(ROUNDS) && ROUNDS > 0) || !(Number.isInteger(BLOCK) && BLOCK > 0)) {
  console.error(USAGE);
  process.exit(2);
}
const log = (m) => process.stderr.write(`[body-size] ${m}\n`);
const ARMS = ['direct', 'forwarder', 'floor', 'proxy', 'chat'];

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-body-size-'));
const procs = [];
try {
  const mock = await startMockProcess();
  procs.push(mock);
  const fwd = await startForwarderProcess(mock.url);
  procs.push(fwd);
  const floor = await startFloorProcess(mock.url, join(tmp, 'floor.journal'));
  procs.push(floor);
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const user = await seedUser(dataDir, writeAgwConfig(dataDir, 'http://127.0.0.1:9'), { email: 'size@example.com', password: 'bench-password-1' });
  const daemon = await startDaemonProcess({ dataDir, configFile: writeAgwConfig(dataDir, mock.url) });
  procs.push(daemon);
  const base = buildScenarios({ mock: mock.url, forwarder: fwd.url, floor: floor.url, agw: daemon.url }, user.key);
  const rows = [];
  for (const kb of SIZES) {
    const arms = Object.fromEntries(ARMS.map((id) => [id, withHistory(base[id], kb)]));
    log(`${kb} KiB: warm-up, then ${ROUNDS} rounds of ${BLOCK} calls per arm`);
    for (const id of ARMS) {
      const q = await runSequential(arms[id], { calls: BLOCK, warmup: BLOCK });
      if (q.failed) throw new Error(`${id} at ${kb} KiB: ${q.failed} calls failed (${q.firstError})`);
    }
    const p50 = Object.fromEntries(ARMS.map((id) => [id, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const id of ARMS) {
        const q = await runSequential(arms[id], { calls: BLOCK, warmup: 0 });
        if (q.failed) throw new Error(`${id} at ${kb} KiB: ${q.failed} calls failed (${q.firstError})`);
        p50[id].push(q.p50 * 1000);
      }
    }
    const added = (id) => median(p50[id].map((x, i) => x - p50.direct[i]));
    const ratio = (id, ref) => median(p50[id].map((x, i) => (x - p50.direct[i]) / (p50[ref][i] - p50.direct[i])));
    rows.push({
      kb,
      bodyBytes: Buffer.byteLength(arms.proxy.body),
      addedUs: Object.fromEntries(ARMS.slice(1).map((id) => [id, Math.round(added(id))])),
      overForwarder: Object.fromEntries(['floor', 'proxy', 'chat'].map((id) => [id, round(ratio(id, 'forwarder'))])),
      overFloor: Object.fromEntries(['proxy', 'chat'].map((id) => [id, round(ratio(id, 'floor'))])),
    });
  }
  if (a.json) console.log(JSON.stringify({ rounds: ROUNDS, block: BLOCK, sizes: rows }, null, 2));
  else {
    console.log(`added p50, µs (median of ${ROUNDS} rounds of ${BLOCK} sequential calls), and over the forwarder's / the floor's (medians of the rounds' ratios)`);
    console.log(['body', 'forwarder', 'floor', 'proxy', 'chat', 'floor/fwd', 'proxy/fwd', 'chat/fwd', 'proxy/floor', 'chat/floor'].map((h) => h.padStart(12)).join(''));
    for (const r of rows) {
      const cells = [`${Math.round(r.bodyBytes / 1024)} KiB`, r.addedUs.forwarder, r.addedUs.floor, r.addedUs.proxy, r.addedUs.chat, r.overForwarder.floor, r.overForwarder.proxy, r.overForwarder.chat, r.overFloor.proxy, r.overFloor.chat];
      console.log(cells.map((c) => String(c ?? 'n/a').padStart(12)).join(''));
    }
  }
} finally {
  for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
}

/** Two decimals; null (a reference that added nothing in a round) stays null, printed n/a. */
function round(x) {
  return x == null ? null : Math.round(x * 100) / 100;
}
