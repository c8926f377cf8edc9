// The interleaved measurement phases: every round runs each scenario once, so that noise
// from the machine (other processes, CPU frequency) hits all of them alike. Figures are
// the medians across rounds.
import { runLoad } from './load.js';
import { cpuMsOf, memoryOf } from './procs.js';
import { runSequential } from './sequential.js';
import { median } from './stats.js';

const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);

/**
 * Sequential latency, `rounds` x every scenario; fills sc.seq and counts outcomes. The order
 * of the scenarios is reversed every other round, so that none is always measured right
 * after another. Per round, each scenario's added latency against its baseline measured in
 * the same round (`seq.roundAdded`): report.js takes its ratios to the forwarder's round by
 * round, so a drift of the machine's speed from one round to the next touches both sides of
 * a ratio alike (bench/ab.js does the same).
 */
export async function sequentialPhase(results, scenarios, ids, { calls, warmup, rounds }) {
  const perRound = Object.fromEntries(ids.map((id) => [id, []]));
  for (let r = 0; r < rounds; r++) {
    for (const id of r % 2 ? [...ids].reverse() : ids) {
      log(`sequential round ${r + 1}/${rounds}: ${id} (${calls} calls)`);
      // a new connection per round: a few calls to open it and take a warm path again
      const q = await runSequential(scenarios[id], { calls, warmup: r === 0 ? warmup : Math.ceil(warmup / 50) });
      perRound[id].push(q);
      const res = results.scenarios[id];
      res.ok += q.ok;
      res.errors += q.failed;
      if (q.firstError) res.firstError ??= q.firstError;
    }
  }
  for (const id of ids) {
    const rs = perRound[id];
    const pick = (k) => median(rs.map((q) => q[k]));
    results.scenarios[id].seq = {
      p50: pick('p50'),
      p99: pick('p99'),
      ttfbP50: pick('ttfbP50'),
      ttfbP99: pick('ttfbP99'),
      rounds: rs.length,
      // every round's p50, for a reader who wants to see the spread behind the median
      roundP50s: rs.map((q) => q.p50),
    };
  }
  for (const id of ids) {
    const sc = results.scenarios[id];
    const baseId = scenarios[id].baseline;
    const base = results.scenarios[baseId]?.seq;
    if (!base) continue;
    // streams: time to first byte; JSON calls: the whole call
    const k = sc.stream ? 'ttfbP50' : 'p50';
    sc.addedP50 = sc.seq[k] - base[k];
    sc.seq.roundAdded = perRound[id].map((q, r) => (q[k] == null || perRound[baseId][r]?.[k] == null ? null : q[k] - perRound[baseId][r][k]));
  }
}

/**
 * Throughput, `rounds` x every connection level x every scenario. After each round the
 * daemon's RSS is read (growth between identical rounds is what a leak looks like).
 * `pidOf(id)` names the process serving a scenario, whose CPU time per call is recorded.
 */
export async function loadPhase(results, scenarios, ids, { connections, duration, rounds, daemonPid, pidOf }) {
  const perRound = {};
  const rss = [];
  for (let r = 0; r < rounds; r++) {
    for (const c of connections) {
      for (const id of ids) {
        log(`load round ${r + 1}/${rounds}: ${id} at ${c} connections for ${duration}s`);
        const cpu0 = cpuMsOf(pidOf(id));
        const l = await runLoad(scenarios[id], { connections: c, duration });
        const cpu1 = cpuMsOf(pidOf(id));
        // CPU the serving process spent per answered call: robust to a busy machine
        l.cpuUsPerCall = cpu0 === null || cpu1 === null || l.ok === 0 ? null : ((cpu1 - cpu0) * 1000) / (l.ok + l.non2xx);
        ((perRound[id] ??= {})[c] ??= []).push(l);
        const res = results.scenarios[id];
        res.ok += l.ok;
        res.cutOff += l.cutOff;
        res.errors += l.errors + l.non2xx;
        if (l.errors + l.non2xx > 0) res.firstError ??= `${l.non2xx} non-2xx, ${l.errors} errors at ${c} connections`;
      }
    }
    rss.push(memoryOf(daemonPid));
  }
  for (const id of Object.keys(perRound)) {
    const out = (results.scenarios[id].load = {});
    for (const [c, ls] of Object.entries(perRound[id])) {
      const pick = (k) => median(ls.map((l) => l[k]));
      out[c] = {
        rps: pick('rps'),
        p50: pick('p50'),
        p99: pick('p99'),
        cpuUsPerCall: pick('cpuUsPerCall'),
        errors: ls.reduce((n, l) => n + l.errors + l.non2xx, 0),
        requests: ls.reduce((n, l) => n + l.ok, 0),
        rounds: ls.length,
      };
    }
  }
  return rss;
}
