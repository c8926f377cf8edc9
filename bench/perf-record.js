// What the daemon's threads do per sequential call, seen by the kernel (issue #32):
//   npm run build && node bench/perf-record.js [--scenario proxy|chat] [--event cpu-clock|page-faults]
//                                              [--calls N] [--top K] [--by file|function|inclusive] [--of KIND] [--history-kb N] [--json]
// Starts the mock upstream and an agw daemon with `--perf-prof` (V8 writes a jitdump of its
// compiled code, which `perf inject --jit` turns into names), answers a warm-up, then runs
// `perf record -g` on the daemon while it answers N sequential calls, and sorts every sample
// by what it was doing: the daemon thread's call path, the booking applier and the journal's
// pages (on the daemon thread, off the path of calls made one at a time), the collector, the
// compilers, other threads. `cpu-clock` samples
// time (µs per call, kernel time included: the system calls and page faults V8's own
// profiler cannot see); `page-faults` counts the faults. The call path is then broken down
// by the innermost JavaScript file of each sample (`--by function`: the innermost JavaScript
// function; `--by inclusive`: each of agw's own functions with everything it called; `--of`:
// another kind than the call path, e.g. `--of applier`; `--history-kb`: each call carries a
// conversation of that many KiB, as a coding agent's calls do).
// Needs Linux perf (Debian: linux-perf); `perf stat` may be unsupported on a virtual
// machine, but these software events are not. Figures under perf are inflated (its sampling
// interrupts the daemon); compare categories and builds with each other, not with bench/.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { seedUser, startDaemonProcess, startMockProcess, writeAgwConfig } from './procs.js';
import { buildScenarios, withHistory } from './scenarios.js';
import { runSequential } from './sequential.js';

const USAGE = 'usage: node bench/perf-record.js [--scenario proxy|chat] [--event cpu-clock|page-faults] [--calls N] [--top K] [--by file|function|inclusive] [--of KIND] [--history-kb N] [--json]';
let a;
try {
  ({ values: a } = parseArgs({ options: { scenario: { type: 'string' }, event: { type: 'string' }, calls: { type: 'string' }, top: { type: 'string' }, by: { type: 'string' }, of: { type: 'string' }, 'history-kb': { type: 'string' }, json: { type: 'boolean' } } }));
} catch (e) {
  console.error(`${e.message}\n${USAGE}`);
  process.exit(2);
}
const SCENARIO = a.scenario ?? 'proxy';
const EVENT = a.event ?? 'cpu-clock';
const CALLS = Number(a.calls ?? 5000);
const TOP = Number(a.top ?? 20);
const BY = a.by ?? 'file';
/** the kind broken down (its name's start): the call path unless asked */
const OF = a.of ?? 'call path';
const HISTORY_KB = Number(a['history-kb'] ?? 0);
/** cpu-clock: one sample per PERIOD_NS of a thread's CPU time (a period: perf does not throttle it as it may a rate) */
const PERIOD_NS = 50_000;
if (!['proxy', 'chat'].includes(SCENARIO) || !['cpu-clock', 'page-faults'].includes(EVENT) || !(Number.isInteger(CALLS) && CALLS > 0) || !(Number.isInteger(TOP) && TOP > 0) || !['file', 'function', 'inclusive'].includes(BY) || !(Number.isInteger(HISTORY_KB) && HISTORY_KB >= 0 && HISTORY_KB <= 4096)) {
  console.error(USAGE);
  process.exit(2);
}
if (spawnSync('perf', ['--version']).status !== 0) {
  console.error('perf-record: Linux perf is not installed (Debian: apt-get install linux-perf)');
  process.exit(2);
}
const log = (m) => process.stderr.write(`[perf-record] ${m}\n`);
const paranoid = Number(readFileSync('/proc/sys/kernel/perf_event_paranoid', 'utf8'));
if (process.getuid?.() !== 0 && paranoid > 1) log(`perf_event_paranoid is ${paranoid}: perf sees user space only (no system calls or faults) unless run as root`);

/**
 * What a sample was doing, from its stack (leaf first): the first rule whose pattern is on
 * the stack names it. Off the call's path: the applier (bookings into agw.db every 20 ms),
 * the journal readying its pages, timers; the collector and compilers wherever they run.
 */
const KINDS = [
  ['applier (bookings into agw.db)', /runBatch|applyBookings|applyPending|debitMany|sqlite-group-commit/],
  ['journal pages readied ahead', /touchAhead/],
  ['collector', /Scaveng|MarkCompact|ConcurrentMarking|Sweeper|MinorMC|IncrementalMarking/],
  ['compilers', /compiler::|Compile(Lazy|Task|Job)|Maglev|Sparkplug|baseline::/],
  ['timers', /processTimers|listOnTimeout/],
];

/** Every kind a sample is sorted into: `--of` names one of them, or the start of a name. */
const KIND_NAMES = [...KINDS.map(([name]) => name), 'event loop waiting', 'call path'].flatMap((k) => [k, `other threads: ${k === 'call path' ? 'other' : k}`]);
if (!OF || !KIND_NAMES.some((k) => k.startsWith(OF))) {
  console.error(`perf-record: --of names a kind, or the start of one: ${KIND_NAMES.join(', ')}`);
  process.exit(2);
}

function categorize(stack) {
  const text = stack.join('\n');
  for (const [name, re] of KINDS) if (re.test(text)) return name;
  if (!stack.some((f) => f.startsWith('JS:')) && /epoll_(p)?wait/.test(text) && !/uv__read|uv__stream_io/.test(text)) return 'event loop waiting';
  return 'call path';
}

/** The innermost JavaScript file of a stack (agw's dist/ path, a package's file, a node: module), else the leaf symbol. */
function fileOf(stack) {
  for (const f of stack) {
    if (!f.startsWith('JS:')) continue;
    const m = /(dist\/[^ :]+|node_modules\/[^ :]+|node:[^ :]+)/.exec(f);
    return m ? m[1].replace(/^node_modules\//, '') : f.slice(3, 60);
  }
  return `(native) ${stack[0] ?? '?'}`;
}

/** The innermost JavaScript function of a stack (its name, file and line as V8 named it), else the leaf symbol. */
function functionOf(stack) {
  const f = stack.find((x) => x.startsWith('JS:'));
  return f ? jsName(f) : `(native) ${stack[0] ?? '?'}`;
}

/** A JavaScript frame's name without its tier mark (V8's *, ~, ^, +) and with its path from dist/ or node_modules/. */
const jsName = (f) => f.slice(3).replace(/^[*~^+]/, '').replace(/file:\/\/\S*?\/(dist|node_modules)\//, '$1/');

/** Each of agw's own functions on a stack (dist/), once each: what it costs with everything it calls. */
function agwFunctionsOf(stack) {
  const names = new Set();
  for (const f of stack) if (f.startsWith('JS:') && f.includes('/dist/')) names.add(jsName(f));
  return names;
}

/** `perf script` output → samples of { tid, stack } (stack: symbols, leaf first). */
function samplesOf(text) {
  // a sample's head (its thread id, padded with spaces), then its call chain, a frame per tab-indented line
  const out = [];
  let cur = null;
  for (const line of text.split('\n')) {
    if (!line.trim()) {
      if (cur) out.push(cur);
      cur = null;
    } else if (!line.startsWith('\t')) cur = { tid: line.trim().split(/\s+/)[0], stack: [] };
    else if (cur) {
      const [, sym] = /^\s*[0-9a-f]+\s+(.*)$/.exec(line) ?? [null, line.trim()];
      cur.stack.push(sym);
    }
  }
  if (cur) out.push(cur);
  return out;
}

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-perf-'));
const procs = [];
/** perf record while it runs: stopped before the scratch directory goes, whatever happened */
let recorder = null;
try {
  const mock = await startMockProcess();
  procs.push(mock);
  const dataDir = join(tmp, 'data');
  mkdirSync(dataDir);
  const user = await seedUser(dataDir, writeAgwConfig(dataDir, 'http://127.0.0.1:9'), { email: 'perf@example.com', password: 'bench-password-1' });
  // jitdump (--perf-prof, written in the daemon's cwd as jit-PID.dump): each compiled function with the time it
  // was placed, so code moved or freed by the collector is not misnamed, as a perf map names it
  const daemon = await startDaemonProcess({ dataDir, configFile: writeAgwConfig(dataDir, mock.url), nodeFlags: ['--perf-prof', '--perf-prof-unwinding-info', '--interpreted-frames-native-stack'], cwd: tmp });
  procs.push(daemon);
  const built = buildScenarios({ mock: mock.url, agw: daemon.url }, user.key)[SCENARIO];
  const sc = HISTORY_KB ? withHistory(built, HISTORY_KB) : built;
  log(`warm-up: 3000 ${SCENARIO} calls`);
  await runSequential(sc, { calls: 3000, warmup: 0 });
  const data = join(tmp, 'perf.data');
  // perf's build-id cache in the scratch directory, not ~/.debug (hundreds of MB of jitted code)
  const perf = (args) => ['--buildid-dir', join(tmp, 'buildid'), ...args];
  const rec = spawn('perf', perf(['record', '-q', '-k', 'mono', '-e', EVENT, '-c', EVENT === 'cpu-clock' ? String(PERIOD_NS) : '1', '-g', '-p', String(daemon.pid), '-o', data]), { stdio: ['ignore', 'ignore', 'inherit'] });
  recorder = rec;
  const recorded = new Promise((r) => rec.once('exit', (code, signal) => r({ code, signal })));
  // a second for perf to attach to every thread; a perf that stopped meanwhile refused (its message above)
  const early = await Promise.race([recorded, new Promise((r) => setTimeout(() => r(null), 1000))]);
  if (early) throw new Error(`perf record stopped at once (${early.code ?? early.signal})`);
  log(`recording ${EVENT} over ${CALLS} calls`);
  const q = await runSequential(sc, { calls: CALLS, warmup: 0 });
  if (q.failed) throw new Error(`${q.failed} calls failed (${q.firstError})`);
  rec.kill('SIGINT');
  const ended = await recorded;
  recorder = null;
  if (!existsSync(data)) throw new Error(`perf record wrote nothing (${ended.code ?? ended.signal})`);
  const injected = join(tmp, 'perf.jit.data');
  const inject = spawnSync('perf', perf(['inject', '--jit', '-i', data, '-o', injected]), { cwd: tmp, encoding: 'utf8' });
  if (inject.status !== 0) throw new Error(`perf inject failed: ${inject.stderr}`);
  const script = spawnSync('perf', perf(['script', '-i', injected, '-F', 'tid,ip,sym']), { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (script.status !== 0) throw new Error(`perf script failed: ${script.stderr}`);
  const samples = samplesOf(script.stdout);
  if (!samples.length) throw new Error('perf recorded no samples of the daemon');
  // the daemon's thread is the one with the most samples (the main thread only hosts the checkpointer)
  const perTid = new Map();
  for (const s of samples) perTid.set(s.tid, (perTid.get(s.tid) ?? 0) + 1);
  const daemonTid = [...perTid].sort((x, y) => y[1] - x[1])[0]?.[0];
  const unit = EVENT === 'cpu-clock' ? PERIOD_NS / 1000 / CALLS : 1 / CALLS; // µs (or faults) per call per sample
  const kinds = new Map();
  const files = new Map();
  for (const s of samples) {
    const kind = s.tid === daemonTid ? categorize(s.stack) : `other threads: ${categorize(s.stack) === 'call path' ? 'other' : categorize(s.stack)}`;
    kinds.set(kind, (kinds.get(kind) ?? 0) + unit);
    if (!kind.startsWith(OF)) continue;
    const keys = BY === 'file' ? [fileOf(s.stack)] : BY === 'function' ? [functionOf(s.stack)] : agwFunctionsOf(s.stack);
    for (const k of keys) files.set(k, (files.get(k) ?? 0) + unit);
  }
  const sorted = (m) => [...m].sort((x, y) => y[1] - x[1]).map(([name, v]) => ({ name, perCall: Math.round(v * 1000) / 1000 }));
  const result = { scenario: SCENARIO, event: EVENT, calls: CALLS, historyKb: HISTORY_KB, p50Ms: q.p50, unit: EVENT === 'cpu-clock' ? 'µs per call (under perf)' : 'faults per call', kinds: sorted(kinds), breakdown: { of: OF, by: BY, top: sorted(files).slice(0, TOP) } };
  if (a.json) console.log(JSON.stringify(result, null, 2));
  else {
    const fmt = (v) => (EVENT === 'cpu-clock' ? v.toFixed(1) : v.toFixed(3)).padStart(9);
    console.log(`${SCENARIO}, ${CALLS} sequential calls under perf (p50 ${(q.p50 * 1000).toFixed(0)} µs), ${result.unit}:`);
    for (const k of result.kinds) console.log(`${fmt(k.perCall)}  ${k.name}`);
    const by = { file: 'innermost JavaScript file', function: 'innermost JavaScript function', inclusive: "agw's functions with what they call" }[BY];
    console.log(`${OF === 'call path' ? 'the call path' : `what starts with "${OF}"`} by ${by} (top ${TOP}):`);
    for (const f of result.breakdown.top) console.log(`${fmt(f.perCall)}  ${f.name}`);
  }
} finally {
  if (recorder && recorder.exitCode === null && recorder.signalCode === null) {
    const gone = new Promise((r) => recorder.once('exit', r));
    recorder.kill('SIGINT');
    await gone;
  }
  for (const p of procs.reverse()) await p.stop().catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
}
