// Turns the raw figures into the targets of issues #9 and #32 and prints them as tables.
import { median, round } from './stats.js';

/** Tolerance for "no growth between rounds": RSS noise of a warm V8 heap. */
export const GROWTH_TOLERANCE_MB = 8;

const ratio = (a, b) => (a == null || b == null || b <= 0 ? null : a / b);

/**
 * Added latency of `id` over `ref`'s: the median of the ratios of rounds (each round's
 * added p50s were measured seconds apart, phases.js sequentialPhase), which a machine whose
 * speed drifts between rounds moves less than a ratio of the two medians (docs/performance.md,
 * stop 41); that ratio where the rounds are not there (figures of an older run).
 */
function addedRatio(s, id, ref) {
  const a = s[id]?.seq?.roundAdded;
  const b = s[ref]?.seq?.roundAdded;
  if (!a || !b) return ratio(s[id]?.addedP50 ?? null, s[ref]?.addedP50 ?? null);
  return median(a.map((x, r) => ratio(x, b[r])).filter((x) => x !== null));
}

/**
 * The accounting floor's added latency against the forwarder's, and agw's against the
 * floor's, in the same run (rounds' ratios, as the targets): how much of a latency target
 * the least durable booking takes on this machine, and how much agw adds beyond it.
 */
export function referenceRatios(r) {
  const s = r.scenarios;
  const of = (id, ref) => (s[id]?.available && s[ref]?.available ? round(addedRatio(s, id, ref), 3) : null);
  return { floorOverForwarder: of('floor', 'forwarder'), chatOverFloor: of('chat', 'floor'), proxyOverFloor: of('proxy', 'floor') };
}

/** Every target of the issue: value, limit, ✓/✗ (null when a figure is missing). */
export function evaluateTargets(r) {
  const s = r.scenarios;
  const rps50 = (id) => s[id]?.load?.[50]?.rps ?? null;
  const t = [];
  const add = (name, value, op, limit, unit = '', verdict = undefined) => {
    const pass = value == null ? null : verdict ?? (op === '<=' ? value <= limit : op === '<' ? value < limit : value >= limit);
    t.push({ name, value: round(value, 3), op, limit, unit, pass });
  };
  // issue #32: full accounting at 0.7x the forwarder's throughput and 1.25x its added latency
  add('chat: added p50 / forwarder added p50', addedRatio(s, 'chat', 'forwarder'), '<=', 1.25, 'x');
  add('chat: rps@50 / forwarder rps@50', ratio(rps50('chat'), rps50('forwarder')), '>=', 0.7, 'x');
  add('proxy: added p50 / forwarder added p50', addedRatio(s, 'proxy', 'forwarder'), '<=', 1.25, 'x');
  add('proxy: rps@50 / forwarder rps@50', ratio(rps50('proxy'), rps50('forwarder')), '>=', 0.7, 'x');
  add('stream: TTFB added / forwarder TTFB added', addedRatio(s, 'chat-stream', 'forwarder-stream'), '<=', 2, 'x');
  const hb = r.heldBack?.['chat-stream'];
  // value: the worst extra delay of an event after the first; the verdict also fails a
  // first event held back by a whole pace (a gateway that buffers the whole stream)
  add('stream: chunk held back (worst extra lag)', hb ? hb.maxRelativeLagMs : null, '<', hb ? hb.paceMs / 2 : 10, 'ms', hb ? !hb.heldBack : undefined);
  add('daemon RSS after load', r.memory?.afterLoadMb ?? null, '<', 150, 'MB');
  add('daemon RSS growth round 1 -> 2', r.memory?.growthMb ?? null, '<=', GROWTH_TOLERANCE_MB, 'MB');
  const spend = r.store?.spend;
  add('spend summary, 1y of usage (p50)', spend?.available && spend.complete ? spend.p50 : null, '<', 200, 'ms');
  add('agw --version', r.cli?.version?.ms ?? null, '<', 150, 'ms');
  add('agw skill validate, 200 files', r.cli?.validate?.available ? r.cli.validate.ms : null, '<', 500, 'ms');
  return t;
}

const fmt = (x, d = 3) => (x == null ? '-' : typeof x === 'number' ? String(round(x, d)) : String(x));
const int = (x) => (x == null ? '-' : String(Math.round(x)));

function table(header, rows) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The human report (docs/performance.md quotes its figures). */
export function formatReport(r) {
  const out = [];
  const m = r.machine;
  out.push(`agw benchmark: ${m.cpu}, ${m.cores} cores, ${m.memGb} GB, Node ${m.node}, ${m.platform}; ${r.startedAt}`);
  out.push(`load average (1 min) at start ${m.loadAvg?.[0]}, at end ${m.loadAvgEnd?.[0] ?? '-'} (other work on the machine inflates absolute figures; ratios are measured side by side)`);
  // how fast this machine starts a process: the CLI targets include it, and it tells a slower machine from a regression
  const startup = r.cli?.nodeStartup?.ms;
  if (startup !== undefined || m.virtual !== undefined) {
    out.push(`machine: ${m.virtual === true ? 'a virtual machine' : m.virtual === false ? 'no hypervisor flag' : 'hypervisor unknown'}; \`node -e 0\` ${startup === undefined ? '-' : `${fmt(startup, 1)} ms`} (compare absolute figures only between runs where this is alike)`);
  }
  const o = r.options;
  out.push(`sequential ${o.calls} calls x ${o.seqRounds ?? o.rounds} rounds (after ${o.warmup} warm-up), autocannon ${o.duration}s at ${o.connections.join('/')} connections x ${o.rounds} rounds; medians across rounds`);
  out.push('');
  const conns = o.connections;
  const top = conns.at(-1);
  const header = ['scenario', 'p50 ms', 'p99 ms', 'TTFB p50', 'added p50', ...conns.flatMap((c) => [`rps@${c}`, `p99@${c}`]), `cpu µs/call@${top}`, 'errors'];
  const rows = Object.entries(r.scenarios).map(([id, sc]) => {
    if (!sc.available) return [id, `unavailable: ${sc.reason}`.slice(0, 60), '', '', '', ...conns.flatMap(() => ['', '']), '', ''];
    const q = sc.seq ?? {};
    return [
      id,
      fmt(q.p50),
      fmt(q.p99),
      sc.stream ? fmt(q.ttfbP50) : '',
      fmt(sc.addedP50),
      ...conns.flatMap((c) => [int(sc.load?.[c]?.rps), fmt(sc.load?.[c]?.p99, 1)]),
      int(sc.load?.[top]?.cpuUsPerCall),
      String(sc.errors),
    ];
  });
  out.push(table(header, rows));
  out.push('(added = scenario p50 - direct p50, streams: time to first byte; cpu = CPU time of the serving process per call:');
  out.push(' mock for direct, forwarder, agw daemon; autocannon latencies have 1 ms resolution)');
  out.push('');
  out.push(table(['target', 'value', 'limit', ''], r.targets.map((t) => [t.name, `${fmt(t.value)}${t.unit ? ' ' + t.unit : ''}`, `${t.op} ${t.limit}`, t.pass == null ? 'n/a' : t.pass ? '✓' : '✗'])));
  const ref = r.references;
  if (ref?.floorOverForwarder != null && ref.chatOverFloor != null && ref.proxyOverFloor != null) {
    out.push(
      `reference: the accounting floor (parse, price, one journal line; no holds, quotas, key limits, request record, metrics) adds ${fmt(ref.floorOverForwarder)}x the forwarder's latency; agw adds ${fmt(ref.chatOverFloor)}x (chat) and ${fmt(ref.proxyOverFloor)}x (proxy) the floor's`,
    );
  }
  out.push('');
  for (const [id, h] of Object.entries(r.heldBack ?? {})) {
    out.push(`paced stream (${h.events} events ${h.paceMs} ms apart), ${id}: first event +${fmt(h.firstEventLagMs, 2)} ms vs direct, worst extra lag of a later event ${fmt(h.maxRelativeLagMs, 2)} ms${h.heldBack ? ' (HELD BACK)' : ''}`);
  }
  const mem = r.memory ?? {};
  out.push(`memory: RSS idle ${fmt(mem.idleMb, 1)} MB, after each load round ${(mem.roundsMb ?? []).map((x) => fmt(x, 1)).join(' / ')} MB, peak ${fmt(mem.peakMb, 1)} MB, growth ${fmt(mem.growthMb, 1)} MB`);
  const b = r.bookkeeping;
  if (b) {
    out.push(`bookkeeping (daemon killed with ${b.killSignal}, started again, then agw.db read): ${b.pass ? 'PASS' : 'FAIL'}`);
    if (b.journalAtKill !== undefined) out.push(`  booking journal at the kill: ${b.journalAtKill} lines; applied by the restart: ${b.replayed} (the rest were in agw.db already)`);
    out.push(`  2xx seen ${b.observed} (+${b.cutOff} cut off in flight), upstream calls ${b.upstream}, usage records ${b.usageFinalized} finalized + ${b.usageFailed} released, wallet debits ${b.walletDebits}, quota units ${b.quotaUsed}, reserved left ${b.usageReserved}`);
    for (const [name, ok] of Object.entries(b.checks)) if (!ok) out.push(`  ✗ ${name}`);
  }
  const st = r.store ?? {};
  if (st.seed) out.push(`store: ${st.seed.rows} usage rows seeded in ${fmt(st.seed.ms / 1000, 1)} s`);
  if (st.spend) {
    out.push(
      st.spend.available
        ? `  spend summary 365d: p50 ${fmt(st.spend.p50, 1)} ms, p99 ${fmt(st.spend.p99, 1)} ms, counted ${st.spend.counted} of ${st.spend.rows} calls${st.spend.complete ? '' : ' (MISMATCH)'}`
        : `  spend summary: unavailable (${st.spend.reason})`,
    );
  }
  if (st.entitlements) {
    const e = st.entitlements;
    out.push(
      e.available
        ? `  entitlements: sequential p50 ${fmt(e.seqP50)} ms; ${e.connections} connections: ${int(e.rps)} rps, p50 ${fmt(e.p50, 1)} ms, p99 ${fmt(e.p99, 1)} ms, errors ${e.errors + e.non2xx}`
        : `  entitlements: unavailable (${e.reason})`,
    );
  }
  const c = r.cli ?? {};
  if (c.version) out.push(`cli: agw --version ${fmt(c.version.ms, 1)} ms (median of ${c.version.runs}; \`node -e 0\` alone: ${fmt(c.nodeStartup?.ms, 1)} ms)`);
  if (c.validate) {
    out.push(
      c.validate.available
        ? `  agw skill validate (${c.validate.files} files, ${c.validate.ok ? 'valid' : `${c.validate.problems} problems`}): ${fmt(c.validate.ms, 1)} ms`
        : `  agw skill validate: unavailable (${c.validate.reason})`,
    );
  }
  out.push('');
  out.push(`result: ${r.ok ? 'every scenario ran with 0 errors, bookkeeping matched' : `NOT OK: ${r.problems.join('; ')}`}; targets met ${r.targets.filter((t) => t.pass).length}/${r.targets.length}`);
  return out.join('\n');
}
