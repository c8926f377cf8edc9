// Where one sequential call's added latency goes, segment by segment (issue #32):
//   npm run build && node bench/timeline.js [--calls N] [--rounds R] [--json] [--pin]
// The forwarder, the accounting floor (servers.js startFloor: the least a call booked
// durably must do) and an agw daemon run with bench/timeline-hook.mjs preloaded, which times
// each call from Node's and undici's diagnostics channels (request in, upstream request
// made, its headers written, the upstream's answer headers and end, the answer written):
// the same marks in every server, no profiler, nothing of agw changed. One connection, one
// call at a time, the scenarios interleaved round by round; each figure is the median of
// the per-1,000-call medians. The CPU profile (call-phases.js) says what runs; this says
// what a caller waits for.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seedUser, startDaemonProcess, startFloorProcess, startForwarderProcess, startMockProcess, writeAgwConfig, ROOT } from './procs.js';
import { buildScenarios } from './scenarios.js';
import { runSequential } from './sequential.js';
import { median } from './stats.js';
import { INSIDE } from './timeline-hook.mjs';

const { values: a } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' }, json: { type: 'boolean' }, pin: { type: 'boolean' } } });
const BATCH = 1000; // timeline-hook.mjs writes one line per 1,000 calls
const CALLS = Math.max(BATCH, Math.round(Number(a.calls ?? 4000) / BATCH) * BATCH);
const ROUNDS = Number(a.rounds ?? 3);
const IDS = ['forwarder', 'floor', 'proxy', 'chat'];
const log = (m) => process.stderr.write(`[timeline] ${m}\n`);

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-timeline-'));
const hook = ['--import', join(ROOT, 'bench', 'timeline-hook.mjs')];
const fileOf = { forwarder: join(tmp, 'forwarder.jsonl'), floor: join(tmp, 'floor.jsonl'), agw: join(tmp, 'agw.jsonl') };
const procs = [];
try {
  const mock = await startMockProcess();
  procs.push(mock);
  const fwd = await startForwarderProcess(mock.url, { nodeFlags: hook, env: { AGW_TIMELINE_FILE: fileOf.forwarder } });
  procs.push(fwd);
  const floor = await startFloorProcess(mock.url, join(tmp, 'floor.journal'), { nodeFlags: hook, env: { AGW_TIMELINE_FILE: fileOf.floor } });
  procs.push(floor);
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const user = await seedUser(dataDir, writeAgwConfig(dataDir, 'http://127.0.0.1:9'), { email: 'timeline@example.com', password: 'bench-password-1' });
  const daemon = await startDaemonProcess({ dataDir, configFile: writeAgwConfig(dataDir, mock.url), nodeFlags: hook, env: { AGW_TIMELINE_FILE: fileOf.agw } });
  procs.push(daemon);
  if (a.pin) pinApart([fwd.pid, floor.pid, daemon.pid], [mock.pid, process.pid]);
  const scenarios = buildScenarios({ mock: mock.url, forwarder: fwd.url, floor: floor.url, agw: daemon.url }, user.key);
  const lines = (file) => (existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : []);
  const batches = Object.fromEntries(IDS.map((id) => [id, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const id of IDS) {
      const file = fileOf[id] ?? fileOf.agw;
      const before = lines(file).length;
      const warmup = r === 0 ? BATCH : 0;
      log(`round ${r + 1}/${ROUNDS}: ${id} (${warmup ? `${warmup} warm-up + ` : ''}${CALLS} calls)`);
      const q = await runSequential(scenarios[id], { calls: CALLS, warmup });
      if (q.failed) throw new Error(`${id}: ${q.failed} calls failed (${q.firstError})`);
      // the hook writes its line as the batch's last answer finishes: give it that moment
      await new Promise((res) => setTimeout(res, 50));
      batches[id].push(...lines(file).slice(before + warmup / BATCH));
    }
  }
  const segments = Object.keys(batches.forwarder[0] ?? {});
  const result = Object.fromEntries(IDS.map((id) => [id, Object.fromEntries(segments.map((s) => [s, round1(median(batches[id].map((b) => b[s]).filter((x) => x !== null)))]))]));
  // agw's own marks (src/daemon/telemetry/phases.ts): the rows most batches of a scenario have
  const AGW = ['proxy', 'chat'];
  const at = (k) => INSIDE.indexOf(k.slice('inside: '.length).split(' → ')[0]);
  const insideRows = [...new Set(AGW.flatMap((id) => batches[id].flatMap((b) => Object.keys(b))))]
    .filter((k) => k.startsWith('inside: ') && AGW.some((id) => batches[id].filter((b) => b[k] != null).length * 2 > batches[id].length))
    .sort((x, y) => at(x) - at(y));
  const inside = Object.fromEntries(AGW.map((id) => [id, Object.fromEntries(insideRows.map((k) => [k, round1(median(batches[id].map((b) => b[k]).filter((x) => x != null)))]))]));
  if (a.json) console.log(JSON.stringify({ options: { calls: CALLS, rounds: ROUNDS }, result, inside }, null, 2));
  else {
    console.log(`µs per sequential call, median of ${ROUNDS * (CALLS / BATCH)} medians of ${BATCH} calls each (one connection)`);
    const w = Math.max(...segments.map((s) => s.length));
    // differences: each against the forwarder, and agw's against the accounting floor
    const diffs = [...IDS.slice(1).map((id) => [id, 'forwarder', `${id}-fwd`]), ['proxy', 'floor', 'proxy-floor'], ['chat', 'floor', 'chat-floor']];
    console.log(`${'segment'.padEnd(w)}  ${IDS.map((id) => id.padStart(9)).join('  ')}  ${diffs.map(([, , h]) => h.padStart(11)).join('  ')}`);
    for (const s of segments) {
      const cells = diffs.map(([id, base]) => cell(result[id][s] === null || result[base][s] === null ? null : round1(result[id][s] - result[base][s])).padStart(11));
      console.log(`${s.padEnd(w)}  ${IDS.map((id) => cell(result[id][s]).padStart(9)).join('  ')}  ${cells.join('  ')}`);
    }
    if (insideRows.length) {
      const wi = Math.max(...insideRows.map((s) => s.length));
      console.log(`\ninside agw, between its marks and Node's and undici's (same calls, medians)`);
      console.log(`${'segment'.padEnd(wi)}  ${AGW.map((id) => id.padStart(9)).join('  ')}`);
      for (const k of insideRows) console.log(`${k.padEnd(wi)}  ${AGW.map((id) => cell(inside[id][k]).padStart(9)).join('  ')}`);
    }
  }
} finally {
  for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
}

/**
 * --pin: the servers measured on the first CPU, the mock and this driver on the last, every
 * thread of each (`taskset -a`), so what a server does beside a call (its GC threads, say)
 * cannot take the CPU the upstream needs: run it with and without to see how much of a
 * server's time is contention for a small machine's CPUs (docs/performance.md, stop 40).
 */
function pinApart(servers, others) {
  const last = os.cpus().length - 1;
  if (last < 1) throw new Error('--pin needs two CPUs');
  const pin = (cpu, pid) => execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
  for (const pid of servers) pin(0, pid);
  for (const pid of others) pin(last, pid);
  log(`pinned: servers on CPU 0, the mock and the driver on CPU ${last}`);
}

/** A figure, or '-' where a server has no such mark (the forwarder reads no body whole, say). */
function cell(x) {
  return x === null || Number.isNaN(x) ? '-' : String(x);
}

function round1(x) {
  return x === null ? null : Math.round(x * 10) / 10;
}
