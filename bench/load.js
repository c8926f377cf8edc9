// Throughput: autocannon (programmatic API) at a fixed number of keep-alive connections.
import autocannon from 'autocannon';

/**
 * Drives one scenario for `duration` seconds. Requests still in flight when the timer
 * ends are cut off by autocannon; they are reported as `cutOff` (the server may or may
 * not have finished them, which the bookkeeping check allows for).
 */
export async function runLoad(sc, { connections, duration }) {
  const r = await autocannon({
    url: sc.origin + sc.path,
    method: sc.method ?? 'POST',
    headers: sc.headers,
    body: sc.body,
    // several users: each connection cycles through their requests
    ...(sc.requests ? { requests: sc.requests.map((r) => ({ method: sc.method ?? 'POST', path: sc.path, headers: r.headers, body: sc.body })) } : {}),
    connections,
    duration,
    pipelining: 1,
    timeout: 10,
  });
  const answered = r['1xx'] + r['2xx'] + r['3xx'] + r['4xx'] + r['5xx'];
  return {
    connections,
    duration: r.duration,
    rps: answered / r.duration,
    p50: r.latency.p50,
    p99: r.latency.p99,
    ok: r['2xx'],
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    cutOff: Math.max(0, r.requests.sent - answered - r.errors),
  };
}
