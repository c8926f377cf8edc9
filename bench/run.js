// The agw benchmark (issue #9). `npm run bench [-- options]`; `node bench/run.js --help`.
// Starts a mock upstream, a bare undici forwarder (the baseline) and an agw daemon on a fresh
// data directory, measures them interleaved, checks the bookkeeping, prints the report.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { checkBookkeeping, journalLines } from './bookkeeping.js';
import { cliTimes } from './cli-times.js';
import { heldBackCheck } from './held-back.js';
import { loadPhase, sequentialPhase } from './phases.js';
import { memoryOf, seedUser, startDaemonProcess, startFloorProcess, startForwarderProcess, startMockProcess, writeAgwConfig } from './procs.js';
import { evaluateTargets, formatReport, referenceRatios } from './report.js';
import { AGW_SCENARIOS, SCENARIO_IDS, SEQUENTIAL_ONLY, buildScenarios } from './scenarios.js';
import { probe } from './sequential.js';
import { entitlements, seedBusyUser, seedUsage, spendSummary } from './store-reads.js';

const HELP = `usage: node bench/run.js [options]     (npm run bench -- [options])
  --duration S       autocannon seconds per run (default 10)
  --calls N          sequential calls per scenario and round (default 500)
  --rounds R         interleaved load rounds (default 2; memory growth needs 2)
  --seq-rounds R     interleaved sequential rounds (default 20; the latency targets are
                     medians of the rounds' ratios, each round's scenarios seconds apart)
  --scenarios a,b    subset of: ${SCENARIO_IDS.join(', ')}
  --usage-rows N     usage records seeded for the spend summary (default 1000000)
  --smoke            a few seconds, tiny counts, no thresholds (CI); exit 0 when every
                     scenario ran with 0 errors and the bookkeeping matched
  --strict           exit 1 when a target is missed
  --json             print the figures as one JSON document on stdout
  --out FILE         also write the JSON document to FILE
  --profile DIR      run the daemon with --cpu-prof, profiles written to DIR
  --keep             keep the temporary data directory`;

const OPTIONS = {
  duration: { type: 'string' },
  calls: { type: 'string' },
  rounds: { type: 'string' },
  'seq-rounds': { type: 'string' },
  scenarios: { type: 'string' },
  'usage-rows': { type: 'string' },
  smoke: { type: 'boolean' },
  strict: { type: 'boolean' },
  json: { type: 'boolean' },
  out: { type: 'string' },
  profile: { type: 'string' },
  keep: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};
const usage = (msg) => {
  console.error(`${msg}\n${HELP}`);
  process.exit(2);
};
let a;
try {
  ({ values: a } = parseArgs({ options: OPTIONS }));
} catch (e) {
  usage(e.message);
}
if (a.help) {
  console.log(HELP);
  process.exit(0);
}
const num = (v, d) => (v === undefined ? d : Number(v));
const smoke = a.smoke === true;
const opts = {
  smoke,
  duration: num(a.duration, smoke ? 1 : 10),
  calls: num(a.calls, smoke ? 100 : 500),
  // untimed calls before a scenario's first sequential round (fewer before later rounds):
  // every server measured at its steady state, JIT-compiled, pools and caches filled
  warmup: smoke ? 20 : 1000,
  rounds: num(a.rounds, smoke ? 1 : 2),
  seqRounds: num(a['seq-rounds'], smoke ? 1 : 20),
  connections: smoke ? [10] : [10, 50],
  usageRows: num(a['usage-rows'], smoke ? 20_000 : 1_000_000),
  cliRuns: smoke ? 2 : 7,
};
let ids = a.scenarios ? a.scenarios.split(',').map((s) => s.trim()) : [...SCENARIO_IDS];
const unknown = ids.filter((id) => !SCENARIO_IDS.includes(id));
if (unknown.length) usage(`unknown scenario: ${unknown.join(', ')}`);
if (![opts.duration, opts.calls, opts.rounds, opts.seqRounds, opts.usageRows].every((n) => Number.isInteger(n) && n > 0)) {
  usage('duration, calls, rounds, seq-rounds and usage-rows must be positive integers');
}
// baselines are needed for "added" latency
if (ids.some((id) => !id.endsWith('stream'))) ids.push('direct');
if (ids.some((id) => id.endsWith('stream'))) ids.push('direct-stream');
ids = SCENARIO_IDS.filter((id) => ids.includes(id));
// the smoke run keeps timed load to the forwarder and agw (baselines run sequentially only)
const loadIds = (smoke ? ids.filter((id) => id === 'forwarder' || AGW_SCENARIOS.has(id)) : ids).filter((id) => !SEQUENTIAL_ONLY.has(id));

const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const results = {
  startedAt: new Date().toISOString(),
  machine: {
    cpu: os.cpus()[0]?.model?.trim() ?? 'unknown',
    cores: os.cpus().length,
    memGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.versions.node,
    platform: `${os.platform()} ${os.release()}`,
    loadAvg: os.loadavg().map((x) => Math.round(x * 100) / 100),
    virtual: isVirtual(),
  },
  options: { ...opts, scenarios: ids },
  scenarios: {},
  memory: {},
  store: {},
  problems: [],
  phasesMs: {},
};

const tmp = mkdtempSync(join(os.tmpdir(), 'agw-bench-'));
const procs = [];
/** Runs one phase and records its wall time. */
async function phase(name, fn) {
  const t = Date.now();
  try {
    return await fn();
  } finally {
    results.phasesMs[name] = Date.now() - t;
  }
}
try {
  const [mock, fwd, floor, dataDir, configFile, user, busy] = await phase('setup', async () => {
    const dataDir = join(tmp, 'data');
    mkdirSync(dataDir);
    // the helper servers start while the store is seeded; the config gets their URL after
    const servers = (async () => {
      const mock = await startMockProcess();
      procs.push(mock);
      const fwd = await startForwarderProcess(mock.url);
      procs.push(fwd);
      const floor = ids.includes('floor') ? await startFloorProcess(mock.url, join(tmp, 'floor.journal')) : null;
      if (floor) procs.push(floor);
      return [mock, fwd, floor];
    })();
    servers.catch(() => {}); // awaited below; a failure there must not crash the process first
    const seedConfig = writeAgwConfig(dataDir, 'http://127.0.0.1:9');
    log('seeding the bench user with the admin CLI, the busy user and its usage in-process');
    const user = await seedUser(dataDir, seedConfig, { email: 'bench@example.com', password: 'bench-password-1' });
    const busy = await seedBusyUser(dataDir, { email: 'busy@example.com', password: 'bench-password-2' });
    results.store.seed = seedUsage(dataDir, busy.id, opts.usageRows, busy.projects);
    const [mock, fwd, floor] = await servers;
    return [mock, fwd, floor, dataDir, writeAgwConfig(dataDir, mock.url), user, busy];
  });

  const daemon = await phase('daemonStart', async () => {
    const nodeFlags = a.profile ? ['--cpu-prof', `--cpu-prof-dir=${a.profile}`] : [];
    const d = await startDaemonProcess({ dataDir, configFile, nodeFlags });
    procs.push(d);
    return d;
  });
  results.memory.idleMb = memoryOf(daemon.pid).rssMb;
  const scenarios = buildScenarios({ mock: mock.url, forwarder: fwd.url, floor: floor?.url, agw: daemon.url }, user.key);

  const live = await phase('sequential', async () => {
    for (const id of ids) {
      const p = await probe(scenarios[id]);
      results.scenarios[id] = { stream: scenarios[id].stream, available: p.available, reason: p.reason, ok: p.ok, errors: 0, cutOff: 0 };
      if (!p.available) log(`${id}: unavailable (${p.reason})`);
    }
    const live = ids.filter((id) => results.scenarios[id].available);
    await sequentialPhase(results, scenarios, live, { ...opts, rounds: opts.seqRounds });
    return live;
  });

  const streams = ['forwarder-stream', 'chat-stream'].filter((id) => live.includes(id));
  if (live.includes('direct-stream') && streams.length) {
    log('paced stream check (chunks held back?)');
    results.heldBack = await phase('heldBack', () => heldBackCheck(scenarios, 'direct-stream', streams, smoke ? 1 : 5));
    for (const id of streams) results.scenarios[id].ok += results.heldBack[id].ok;
  }

  const rss = await phase('load', () =>
    loadPhase(results, scenarios, loadIds.filter((id) => live.includes(id)), {
      ...opts,
      daemonPid: daemon.pid,
      pidOf: (id) => (AGW_SCENARIOS.has(id) ? daemon.pid : id.startsWith('forwarder') ? fwd.pid : mock.pid),
    }),
  );
  results.memory.roundsMb = rss.map((m) => m.rssMb);
  results.memory.afterLoadMb = rss.at(-1)?.rssMb ?? null;
  results.memory.peakMb = memoryOf(daemon.pid).hwmMb;
  results.memory.growthMb = rss.length >= 2 ? rss.at(-1).rssMb - rss.at(-2).rssMb : null;

  await phase('storeReads', async () => {
    log('store-heavy reads: spend summary and entitlements');
    results.store.spend = await spendSummary(daemon.url, busy, opts.usageRows, smoke ? { calls: 3, warmup: 1 } : {});
    results.store.entitlements = await entitlements(daemon.url, busy.key, {
      connections: opts.connections.at(-1),
      duration: Math.max(1, Math.round(opts.duration / 2)),
      calls: smoke ? 20 : 200,
    });
  });

  await phase('bookkeeping', async () => {
    const served = await (await fetch(`${mock.url}/__stats`)).json();
    const upstream = (served['Bearer sk-bench-agw'] ?? 0) + (served['sk-bench-agw'] ?? 0);
    const killSignal = a.profile ? 'SIGINT' : 'SIGKILL';
    log(`stopping the daemon with ${killSignal}; a new daemon on the same store applies its booking journal; then agw.db is read`);
    await daemon.stop(killSignal);
    const journalAtKill = journalLines(dataDir);
    // the crash-recovery path an operator takes: start agw again, which applies what the
    // killed process had journaled but not yet written, then stop it
    const again = await startDaemonProcess({ dataDir, configFile });
    await again.stop('SIGTERM');
    const replayed = Number(/"replayed":(\d+)/.exec(again.stderr())?.[1] ?? 0);
    const agw = Object.entries(results.scenarios).filter(([id]) => AGW_SCENARIOS.has(id));
    results.bookkeeping = {
      killSignal,
      journalAtKill,
      replayed,
      ...checkBookkeeping(dataDir, user.id, {
        observed: agw.reduce((n, [, s]) => n + s.ok, 0),
        cutOff: agw.reduce((n, [, s]) => n + s.cutOff, 0),
        upstream,
        initialCreditNano: 1_000_000 * 1e9,
      }),
    };
  });

  log('CLI wall times');
  results.cli = await phase('cli', () => cliTimes(tmp, { runs: opts.cliRuns }));
} catch (e) {
  results.problems.push(`fatal: ${e?.stack ?? e}`);
} finally {
  await Promise.all(procs.map((p) => p.stop().catch(() => {})));
  if (!a.keep) rmSync(tmp, { recursive: true, force: true });
  else log(`kept ${tmp}`);
}

for (const [id, s] of Object.entries(results.scenarios)) {
  if (!s.available) results.problems.push(`${id} unavailable: ${s.reason}`);
  else if (s.errors > 0) results.problems.push(`${id}: ${s.errors} errors (${s.firstError})`);
}
if (results.bookkeeping && !results.bookkeeping.pass) results.problems.push('bookkeeping mismatch');
for (const [name, part] of [['spend summary', results.store.spend], ['entitlements', results.store.entitlements], ['skill validate', results.cli?.validate]]) {
  if (part && !part.available) results.problems.push(`${name} unavailable: ${part.reason}`);
}
results.targets = evaluateTargets(results);
results.references = referenceRatios(results);
results.ok = results.problems.length === 0;
results.finishedAt = new Date().toISOString();
results.machine.loadAvgEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);

const doc = JSON.stringify(results, null, 2);
if (a.out) writeFileSync(a.out, doc + '\n');
if (a.json) process.stdout.write(doc + '\n');
else process.stdout.write(formatReport(results) + '\n');
const missed = results.targets.some((t) => t.pass === false);
process.exitCode = !results.ok || (a.strict && !smoke && missed) ? 1 : 0;

/** Whether the CPU says it runs under a hypervisor (/proc/cpuinfo's `hypervisor` flag; Linux only). */
function isVirtual() {
  try {
    return /^flags\s*:.*\bhypervisor\b/m.test(readFileSync('/proc/cpuinfo', 'utf8'));
  } catch {
    return null;
  }
}
