// Preloaded (`node --import ./bench/timeline-hook.mjs`) into the forwarder or an agw daemon by
// bench/timeline.js: times each sequential call's segments from Node's and undici's
// diagnostics channels, without a line of the server's own code changed. One call at a time
// (the timeline drives one connection), so the upstream request belongs to the request in
// flight. Every BATCH calls, one JSON line of per-segment medians (µs) goes to
// $AGW_TIMELINE_FILE.
import { appendFileSync } from 'node:fs';
import { subscribe } from 'node:diagnostics_channel';

const FILE = process.env.AGW_TIMELINE_FILE;
const BATCH = 1000;
/** segment name → [from mark, to mark] */
export const SEGMENTS = {
  'request in → upstream request made': ['in', 'create'],
  'upstream request made → headers written': ['create', 'sent'],
  'upstream answer wait (network, upstream)': ['sent', 'headers'],
  'upstream answer headers → body complete': ['headers', 'trailers'],
  'upstream body complete → answer written': ['trailers', 'finish'],
  'request in → answer written (total)': ['in', 'finish'],
  // the same step in the floor and in agw's proxy (its `body` mark): how much slower it runs inside agw
  'request in → its body received whole': ['in', 'body'],
};
/**
 * The event loop's busy time (performance.eventLoopUtilization's `active`) in two stretches
 * where a server has nothing of the call's own to do: what else it runs there (deferred
 * work, GC, other timers) delays the call. `active` moves at the loop's turns, so a
 * stretch counts the rest of the turn it starts in.
 */
const WAIT_BUSY = 'busy during the upstream answer wait';
const IDLE_BUSY = 'busy between answer written and next request in';
/**
 * The rest of the event loop's turn after a write that wakes another process (measured to
 * its check phase, `setImmediate`): on a small machine the woken process may wait on this
 * one's CPU until the turn ends (a sync wake-up), so this work delays it.
 */
const SENT_TURN = 'upstream request written → turn ends';
const FINISH_TURN = 'answer written → turn ends';
let lastFinish = null;
const rows = Object.fromEntries([...Object.keys(SEGMENTS), WAIT_BUSY, IDLE_BUSY, SENT_TURN, FINISH_TURN].map((k) => [k, []]));
const elu = {};
/**
 * Inside agw: its own marks (src/daemon/telemetry/phases.ts, channel `agw:call:phase`)
 * between Node's and undici's, in the order a JSON call passes them. Each pair of
 * consecutive marks a call passed is one row "inside: a → b" (a mark a call skips, e.g.
 * `journaled` on PostgreSQL, joins its neighbours).
 */
export const INSIDE = ['in', 'authenticated', 'body', 'parsed', 'handling', 'admitting', 'admitted', 'sending', 'create', 'sent', 'headers', 'trailers', 'answer-read', 'booking', 'journaled', 'booked', 'answered', 'finish'];
let t = null;
const mark = (name) => () => {
  if (t && t[name] === undefined) {
    t[name] = performance.now();
    if (name === 'sent' || name === 'headers') elu[name] = performance.eventLoopUtilization().active;
    if (name === 'sent') {
      const at = t[name];
      setImmediate(() => rows[SENT_TURN].push((performance.now() - at) * 1000));
    }
  }
};
if (FILE) {
  subscribe('http.server.request.start', () => {
    t = { in: performance.now() };
    const now = performance.eventLoopUtilization().active;
    if (lastFinish !== null) rows[IDLE_BUSY].push((now - lastFinish) * 1000);
  });
  subscribe('undici:request:create', mark('create'));
  subscribe('undici:client:sendHeaders', mark('sent'));
  subscribe('undici:request:headers', mark('headers'));
  subscribe('undici:request:trailers', mark('trailers'));
  subscribe('agw:call:phase', (name) => mark(name)());
  subscribe('http.server.response.finish', () => {
    if (!t) return;
    t.finish = performance.now();
    const done = t;
    setImmediate(() => rows[FINISH_TURN].push((performance.now() - done.finish) * 1000));
    t = null;
    lastFinish = performance.eventLoopUtilization().active;
    if (elu.sent !== undefined && elu.headers !== undefined) rows[WAIT_BUSY].push((elu.headers - elu.sent) * 1000);
    elu.sent = elu.headers = undefined;
    for (const [k, [a, b]] of Object.entries(SEGMENTS)) if (done[a] !== undefined && done[b] !== undefined) rows[k].push((done[b] - done[a]) * 1000);
    if (done.authenticated !== undefined) {
      let prev = null;
      for (const m of INSIDE) {
        if (done[m] === undefined) continue;
        if (prev !== null) (rows[`inside: ${prev} → ${m}`] ??= []).push((done[m] - done[prev]) * 1000);
        prev = m;
      }
    }
    if (rows['request in → answer written (total)'].length < BATCH) return;
    const med = {};
    for (const [k, xs] of Object.entries(rows)) {
      xs.sort((x, y) => x - y);
      med[k] = xs.length ? xs[xs.length >> 1] : null;
      xs.length = 0;
    }
    appendFileSync(FILE, `${JSON.stringify(med)}\n`);
  });
}
