// Where one gateway call's CPU goes, phase by phase (issue #32):
//   npm run build && node bench/call-phases.js [--calls N] [--connections C] [--json]
// Starts the mock upstream, the bare forwarder and, per scenario (chat, proxy), a fresh agw
// daemon under `--cpu-prof`; drives each with N calls at C connections (autocannon, after a
// warm-up), stops it with SIGINT so V8 writes the profile, and attributes every sample to a
// phase: the innermost agw frame of its stack names it (by file, PHASES below); a stack
// without one is named by its leaf's package (fastify, undici, node's http/net, GC). µs per
// call = the phase's sampled time during the run (after a pause that follows the warm-up)
// / the calls the run answered 2xx. The forwarder is
// profiled the same way: the floor every phase is added to. `--cpu` runs without the
// profiler and reports each process's CPU µs per call and its req/s instead (a quick A/B
// for one change; the profiler's signals inflate every system call it samples), each run
// `--seconds S` long (default 8).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { cpuMsOf, memoryOf, seedUser, spawnServer, startDaemonProcess, startMockProcess, writeAgwConfig } from './procs.js';
import { buildScenarios } from './scenarios.js';

const { values: a } = parseArgs({ options: { rounds: { type: 'string' }, cpu: { type: 'boolean' }, calls: { type: 'string' }, connections: { type: 'string' }, seconds: { type: 'string' }, json: { type: 'boolean' }, keep: { type: 'boolean' } } });
const CALLS = Number(a.calls ?? 40000);
const CONNECTIONS = Number(a.connections ?? 50);
const WARMUP = 2000;
const SECONDS = Number(a.seconds ?? 8);
const log = (m) => process.stderr.write(`[phases] ${m}\n`);

/** agw's own files → phase (first match wins; paths relative to dist/). */
const PHASES = [
  [/daemon\/(gateway\/auth|auth\/)|daemon\/store\/wal-index-watch/, 'auth: key → principal (cache, store version look)'],
  [/daemon\/money\/sqlite\/journal/, 'booking: journal line (write(2) before the answer)'],
  [/daemon\/money\/(sqlite\/ledger|postgres\/|bookings|wallets)|daemon\/store\/(sqlite|spend-rollup)/, 'booking: batches applied to agw.db'],
  [/daemon\/money\/(calls|engine|key-limits|quotas|rates|settle|sqlite\/)|daemon\/gateway\/inflight/, 'admission and settling (in memory)'],
  [/daemon\/money\/(pricing|hold|unpriced)|daemon\/gateway\/(usage|image-|count-tokens)/, 'quote, usage and price'],
  [/daemon\/gateway\/(translate\/|chat-call|resolve|smart|cloud-chat|validate|body-depth|model-allowlist|key-refusal)/, 'resolve, validate, translate'],
  [/daemon\/gateway\/(relay|upstream|redact|keys\/|breaker|clouds\/)|daemon\/routes\/proxy|shared\/secret-redactor/, 'upstream call and answer (agw code)'],
  [/daemon\/(telemetry|context\/metrics|requests)|daemon\/.*request-log/, 'metrics and request log'],
  [/daemon\/(app|routes|http|finite-numbers|route-)|shared\/schemas/, 'HTTP server (fastify, ajv, pino, node http)'],
];
const HTTP_SERVER = 'HTTP server (fastify, ajv, pino, node http)';
/** Libraries that are a phase of their own wherever they are called from. */
const LIBS = {
  fastify: HTTP_SERVER,
  'find-my-way': HTTP_SERVER,
  avvio: HTTP_SERVER,
  ajv: HTTP_SERVER,
  pino: HTTP_SERVER,
  'fast-json-stringify': HTTP_SERVER,
  'secure-json-parse': HTTP_SERVER,
  undici: 'upstream client (undici)',
  'better-sqlite3': 'booking: batches applied to agw.db',
};

function phaseOfUrl(url) {
  if (url.includes('/node_modules/')) return undefined;
  const dist = url.indexOf('/dist/');
  if (dist >= 0) {
    const rel = url.slice(dist + 6);
    for (const [re, name] of PHASES) if (re.test(rel)) return name;
    return `other agw (${rel.replace(/\.js$/, '')})`;
  }
  return undefined;
}

function pkgOf(url) {
  const nm = url.lastIndexOf('node_modules/');
  if (nm < 0) return undefined;
  const parts = url.slice(nm + 13).split('/');
  return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

function libOf(cf) {
  if (cf.functionName === '(garbage collector)') return 'GC';
  if (cf.functionName === '(program)') return 'V8 and native (program)';
  if (cf.functionName === '(idle)') return null;
  const url = cf.url.replace(/^file:\/\//, '');
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 13).split('/');
    const pkg = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
    return LIBS[pkg] ?? `library ${pkg}`;
  }
  if (url.startsWith('node:')) return /http|_http|net|stream|tls|events|timers/.test(url) ? 'node http, net, streams' : `node ${url.slice(5)}`;
  return 'V8 builtins (JSON, Buffer, …)';
}

/** Sampled µs by phase of one profile. */
export function phasesOf(prof) {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const cache = new Map();
  const phaseOfNode = (id) => {
    if (cache.has(id)) return cache.get(id);
    let p;
    for (let cur = id; cur !== undefined && !p; cur = parent.get(cur)) {
      const url = byId.get(cur).callFrame.url;
      p = phaseOfUrl(url) ?? LIBS[pkgOf(url)];
    }
    if (!p) {
      p = libOf(byId.get(id).callFrame);
      if (p === 'node http, net, streams') p = HTTP_SERVER;
    }
    cache.set(id, p);
    return p;
  };
  // the measured calls only: the samples after the pause between warm-up (start-up and
  // schema compilation included) and the run, the longest stretch of (idle) in the profile
  let from = 0;
  let best = 0;
  for (let i = 0, run = 0, start = 0; i < prof.samples.length; i++) {
    if (byId.get(prof.samples[i]).callFrame.functionName === '(idle)') {
      if (run === 0) start = i;
      run += prof.timeDeltas[i + 1] ?? 0;
      if (run > best) [best, from] = [run, start];
    } else run = 0;
  }
  const out = new Map();
  for (let i = from; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i + 1] ?? 0;
    const p = phaseOfNode(prof.samples[i]);
    if (p) out.set(p, (out.get(p) ?? 0) + dt);
  }
  return out;
}

/** `calls` calls, or (a number of seconds as `{ seconds }`) as many as fit in that time. */
async function drive(sc, calls, connections) {
  const howMuch = typeof calls === 'number' ? { amount: calls } : { duration: calls.seconds };
  const r = await autocannon({ url: sc.origin + sc.path, method: 'POST', headers: sc.headers, body: sc.body, connections, ...howMuch, pipelining: 1, timeout: 10 });
  return { ok: r['2xx'], other: r.non2xx + r.errors };
}

async function profiled(name, start, scenarioOf) {
  const dir = mkdtempSync(join(tmpdir(), `agw-phases-${name}-`));
  const proc = await start(a.cpu ? [] : ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  const sc = scenarioOf(proc.url);
  log(`${name}: warm-up ${WARMUP}, then ${CALLS} calls at ${CONNECTIONS} connections`);
  const warm = await drive(sc, WARMUP, CONNECTIONS);
  await new Promise((r) => setTimeout(r, 1500)); // the pause that marks where the run starts in the profile
  const cpu0 = cpuMsOf(proc.pid);
  const t0 = performance.now();
  const run = await drive(sc, CALLS, CONNECTIONS);
  const seconds = (performance.now() - t0) / 1000;
  const cpuUs = ((cpuMsOf(proc.pid) - cpu0) * 1000) / run.ok;
  await proc.stop('SIGINT');
  if (a.cpu) {
    rmSync(dir, { recursive: true, force: true });
    return { calls: run.ok, rps: Math.round(run.ok / seconds), cpuUsPerCall: Math.round(cpuUs) };
  }
  // one profile per thread (the daemon's worker threads write their own): summed
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  if (!files.length) throw new Error(`${name}: no profile written in ${dir}`);
  const phases = new Map();
  for (const f of files) for (const [p, us] of phasesOf(JSON.parse(readFileSync(join(dir, f), 'utf8')))) phases.set(p, (phases.get(p) ?? 0) + us);
  if (!a.keep) rmSync(dir, { recursive: true, force: true });
  const calls = run.ok;
  if (warm.other + run.other) throw new Error(`${name}: ${warm.other + run.other} calls failed`);
  const perCall = Object.fromEntries([...phases].sort((x, y) => y[1] - x[1]).map(([p, us]) => [p, Math.round((us / calls) * 10) / 10]));
  const total = Object.values(perCall).reduce((s, v) => s + v, 0);
  return { calls, totalUsPerCall: Math.round(total * 10) / 10, perCall, ...(a.keep ? { profileDir: dir } : {}) };
}

/** --cpu: one forwarder and one daemon, `rounds` interleaved runs of every scenario; medians. */
async function cpuRounds() {
  const rounds = Number(a.rounds ?? 3);
  const fwd = await spawnServer([new URL('./servers.js', import.meta.url).pathname, 'forwarder', mock.url], { name: 'bare forwarder' });
  const dataDir = mkdtempSync(join(tmpdir(), 'agw-phases-data-'));
  const configFile = writeAgwConfig(dataDir, mock.url);
  const user = await seedUser(dataDir, configFile, { email: 'phases@example.com', password: 'bench-password-1' });
  const d = await startDaemonProcess({ dataDir, configFile });
  const scs = buildScenarios({ mock: mock.url, forwarder: fwd.url, agw: d.url }, user.key);
  const runs = { forwarder: [], chat: [], proxy: [] };
  const rss = [];
  try {
    for (const id of Object.keys(runs)) await drive(scs[id], WARMUP, CONNECTIONS);
    for (let r = 0; r < rounds; r++) {
      for (const id of Object.keys(runs)) {
        const pid = id === 'forwarder' ? fwd.pid : d.pid;
        const cpu0 = cpuMsOf(pid);
        const t0 = performance.now();
        // timed, not counted: a counted run ends on autocannon's 1-second tick, which
        // quantized req/s (20,000 calls read as 10,000, 6,667 or 5,000 req/s)
        const run = await drive(scs[id], { seconds: SECONDS }, CONNECTIONS);
        if (run.other) throw new Error(`${id}: ${run.other} calls failed`);
        runs[id].push({ rps: run.ok / ((performance.now() - t0) / 1000), cpuUs: ((cpuMsOf(pid) - cpu0) * 1000) / run.ok });
      }
      rss.push(memoryOf(d.pid).rssMb);
      log(`round ${r + 1}/${rounds} done`);
    }
  } finally {
    await d.stop('SIGTERM');
    await fwd.stop('SIGTERM');
    rmSync(dataDir, { recursive: true, force: true });
  }
  const med = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
  for (const [id, rs] of Object.entries(runs)) {
    const ratio = med(rs.map((x, i) => x.rps / runs.forwarder[i].rps));
    result.scenarios[id] = { rps: Math.round(med(rs.map((x) => x.rps))), rpsVsForwarder: Math.round(ratio * 1000) / 1000, cpuUsPerCall: Math.round(med(rs.map((x) => x.cpuUs))), rounds: rs.map((x) => Math.round(x.rps)) };
  }
  result.daemonRssMbAfterRounds = rss.map((x) => Math.round(x * 10) / 10);
}

const mock = await startMockProcess();
const dataDirs = [];
const result = { options: { calls: CALLS, connections: CONNECTIONS, warmup: WARMUP }, scenarios: {} };
try {
  if (a.cpu) await cpuRounds();
  else {
  const fwdUrl = { value: '' };
  result.scenarios.forwarder = await profiled(
    'forwarder',
    (flags) => spawnServer([...flags, new URL('./servers.js', import.meta.url).pathname, 'forwarder', mock.url], { name: 'bare forwarder' }),
    (url) => buildScenarios({ mock: mock.url, forwarder: (fwdUrl.value = url), agw: url }, 'x').forwarder,
  );
  for (const id of ['chat', 'proxy']) {
    const dataDir = mkdtempSync(join(tmpdir(), 'agw-phases-data-'));
    dataDirs.push(dataDir);
    const configFile = writeAgwConfig(dataDir, mock.url);
    const user = await seedUser(dataDir, configFile, { email: `phases-${id}@example.com`, password: 'bench-password-1' });
    result.scenarios[id] = await profiled(id, (nodeFlags) => startDaemonProcess({ dataDir, configFile, nodeFlags }), (url) => buildScenarios({ mock: mock.url, forwarder: url, agw: url }, user.key)[id]);
  }
  }
} finally {
  await mock.stop('SIGTERM').catch(() => undefined);
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
}

if (a.json) console.log(JSON.stringify(result, null, 2));
else if (a.cpu) {
  for (const [id, r] of Object.entries(result.scenarios)) {
    console.log(`${id.padEnd(10)} ${String(r.rps).padStart(6)} req/s (${r.rpsVsForwarder.toFixed(3)}x, rounds ${r.rounds.join(' ')})  ${String(r.cpuUsPerCall).padStart(4)} µs CPU per call`);
  }
  console.log(`daemon RSS after each round: ${result.daemonRssMbAfterRounds.join(', ')} MB`);
} else {
  const names = [...new Set(Object.values(result.scenarios).flatMap((s) => Object.keys(s.perCall)))];
  const ids = Object.keys(result.scenarios);
  const w = Math.max(...names.map((n) => n.length), 10);
  console.log(`CPU µs per call, sampled (V8 --cpu-prof) at ${CONNECTIONS} connections, ${CALLS} calls after ${WARMUP} warm-up`);
  console.log(['phase'.padEnd(w), ...ids.map((i) => i.padStart(10))].join('  '));
  for (const n of names) console.log([n.padEnd(w), ...ids.map((i) => String(result.scenarios[i].perCall[n] ?? '-').padStart(10))].join('  '));
  console.log(['total'.padEnd(w), ...ids.map((i) => String(result.scenarios[i].totalUsPerCall).padStart(10))].join('  '));
}
