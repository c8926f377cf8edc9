// "Chunks never held back": the mock spaces its SSE events PACE ms apart. Through agw each
// event must follow the first one as it does directly: a gateway that buffers until the
// next event (or the end) shows an event arriving late relative to the first, or a first
// event arriving a whole PACE (or the whole stream) after the direct one.
import { Client } from 'undici';
import { withUserText } from './scenarios.js';
import { median, msSince } from './stats.js';
export const PACE_MS = 20;

/** Arrival time (ms from the request) of every SSE event of one paced call. */
async function eventTimes(client, sc) {
  const t0 = process.hrtime.bigint();
  const res = await client.request({ method: 'POST', path: sc.path, headers: sc.headers, body: sc.body });
  const times = [];
  let text = '';
  for await (const chunk of res.body) {
    const at = msSince(t0);
    text += chunk;
    const events = text.split('\n\n').length - 1;
    while (times.length < events) times.push(at);
  }
  return { status: res.statusCode, times };
}

/**
 * Runs `reps` paced calls per scenario (after one unpaced warm-up call) and compares the
 * event arrival times with the baseline's. Per scenario, medians over the calls of:
 * firstEventLagMs = first event vs the baseline's first event; maxRelativeLagMs = the worst
 * (t_i - t_0) - (baseline t_i - baseline t_0) over the events.
 */
export async function heldBackCheck(scenarios, baselineId, ids, reps = 3) {
  const timesOf = async (sc) => {
    const client = new Client(sc.origin);
    const paced = withUserText(sc, `pace ${PACE_MS}`);
    const runs = [];
    try {
      await eventTimes(client, sc);
      for (let i = 0; i < reps; i++) runs.push(await eventTimes(client, paced));
    } finally {
      await client.close().catch(() => {});
    }
    return runs;
  };
  const base = await timesOf(scenarios[baselineId]);
  const baseTimes = base[0].times.map((_, i) => median(base.map((r) => r.times[i])));
  const out = {};
  for (const id of ids) {
    const runs = await timesOf(scenarios[id]);
    const ok = runs.every((r) => r.status === 200 && r.times.length > 2);
    const rel = runs.map((r) => {
      let worst = 0;
      const n = Math.min(r.times.length, baseTimes.length);
      for (let i = 1; i < n; i++) worst = Math.max(worst, r.times[i] - r.times[0] - (baseTimes[i] - baseTimes[0]));
      return worst;
    });
    const firstEventLagMs = median(runs.map((r) => r.times[0] - baseTimes[0]));
    const maxRelativeLagMs = median(rel);
    out[id] = {
      events: runs[0].times.length,
      baselineEvents: baseTimes.length,
      firstEventLagMs,
      maxRelativeLagMs,
      paceMs: PACE_MS,
      heldBack: !ok || firstEventLagMs >= PACE_MS || maxRelativeLagMs >= PACE_MS / 2,
      calls: runs.length + 1,
      ok: runs.filter((r) => r.status === 200).length + 1,
    };
  }
  return out;
}
