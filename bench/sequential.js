// Sequential latency: one keep-alive connection, one call at a time, timed with
// process.hrtime.bigint(). For streams the first body chunk is the time to first byte.
import { Client } from 'undici';
import { msSince, percentile } from './stats.js';

/** One call: status, time to first body byte and to the last byte (ms), body text. */
export async function call(client, sc, { keepBody = false } = {}) {
  const t0 = process.hrtime.bigint();
  const res = await client.request({ method: 'POST', path: sc.path, headers: sc.headers, body: sc.body });
  let ttfb = null;
  let text = '';
  for await (const chunk of res.body) {
    if (ttfb === null) ttfb = msSince(t0);
    if (keepBody) text += chunk;
  }
  const total = msSince(t0);
  return { status: res.statusCode, headers: res.headers, ttfb: ttfb ?? total, total, text };
}

/** Tells whether a scenario answers 2xx; the reason when it does not. */
export async function probe(sc) {
  const client = new Client(sc.origin);
  try {
    const r = await call(client, sc, { keepBody: true });
    if (r.status >= 200 && r.status < 300) return { available: true, ok: 1 };
    return { available: false, reason: `HTTP ${r.status} ${r.text.slice(0, 160)}`, ok: 0 };
  } catch (e) {
    return { available: false, reason: String(e?.message ?? e), ok: 0 };
  } finally {
    await client.close().catch(() => {});
  }
}

/**
 * `warmup` untimed calls, then `calls` timed ones on one connection.
 * Returns percentiles (ms) and the counts of 2xx / other answers (warm-up included).
 */
export async function runSequential(sc, { calls, warmup }) {
  const client = new Client(sc.origin, { pipelining: 1, keepAliveTimeout: 60_000 });
  const totals = new Float64Array(calls);
  const firsts = new Float64Array(calls);
  let ok = 0;
  let failed = 0;
  let firstError = null;
  try {
    for (let i = 0; i < warmup + calls; i++) {
      let r;
      try {
        r = await call(client, sc);
      } catch (e) {
        failed++;
        firstError ??= String(e?.message ?? e);
        continue;
      }
      if (r.status >= 200 && r.status < 300) ok++;
      else {
        failed++;
        firstError ??= `HTTP ${r.status}`;
      }
      if (i >= warmup) {
        totals[i - warmup] = r.total;
        firsts[i - warmup] = r.ttfb;
      }
    }
  } finally {
    await client.close().catch(() => {});
  }
  return {
    calls,
    ok,
    failed,
    firstError,
    p50: percentile(totals, 50),
    p99: percentile(totals, 99),
    ttfbP50: percentile(firsts, 50),
    ttfbP99: percentile(firsts, 99),
  };
}
