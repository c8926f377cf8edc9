import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { startOpenAiSim, type SimUpstream } from '../../src/daemon/demo/upstreams.js';

/**
 * Issue #2 point 10: GET /api/healthz, and GET /api/metrics in the Prometheus text format
 * with request counts and latency histograms by route and status, and upstream calls by
 * provider and outcome.
 */
let d: TestDaemon;
let sim: SimUpstream;
let u: TestUser;

beforeAll(async () => {
  sim = await startOpenAiSim({ apiKey: 'sk-sim-key' });
  d = await startTestDaemon({ env: { AGW_PROVIDER_OPENAI_BASE_URL: sim.url, AGW_PROVIDER_OPENAI_KEY: 'sk-sim-key' } });
  u = await d.user({ balance: 5 });
});
afterAll(async () => {
  await d.close();
  await sim.close();
});

async function metrics(): Promise<string> {
  const res = await d.fetch('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of one sample line, by its exact name and labels. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('health and metrics', () => {
  it('GET /api/healthz -> 200 {"status":"ok"} without credentials', async () => {
    const res = await d.fetch('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('counts requests and records latency histograms by route and status', async () => {
    for (let i = 0; i < 3; i++) await d.fetch('/portal/providers/public');
    await d.fetch('/no/such/thing');
    await d.fetch('/wallet');
    await d.fetch('/wallet', { key: u.key });
    await d.fetch('/wallet', { key: u.key });
    const text = await metrics();

    const catalog = 'method="GET",route="/api/portal/providers/public",status="200"';
    expect(sample(text, `agw_http_requests_total{${catalog}}`)).toBe(3);
    expect(sample(text, 'agw_http_requests_total{method="GET",route="/api/wallet",status="401"}')).toBe(1);
    expect(sample(text, 'agw_http_requests_total{method="GET",route="/api/wallet",status="200"}')).toBe(2);
    expect(sample(text, 'agw_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);

    expect(text).toContain('# TYPE agw_http_requests_total counter');
    expect(text).toContain('# TYPE agw_http_request_duration_seconds histogram');
    expect(sample(text, `agw_http_request_duration_seconds_count{${catalog}}`)).toBe(3);
    expect(sample(text, `agw_http_request_duration_seconds_bucket{${catalog},le="+Inf"}`)).toBe(3);
    const sum = sample(text, `agw_http_request_duration_seconds_sum{${catalog}}`)!;
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(30);
    const buckets = text
      .split('\n')
      .filter((l) => l.startsWith(`agw_http_request_duration_seconds_bucket{${catalog},`))
      .map((l) => Number(l.split(' ')[1]));
    expect(buckets.length).toBeGreaterThan(5);
    buckets.forEach((v, i) => i > 0 && expect(v).toBeGreaterThanOrEqual(buckets[i - 1]));
  });

  it('counts upstream calls by provider and outcome', async () => {
    const chat = () =>
      d.fetch('/external/openai/v1/chat/completions', {
        method: 'POST',
        key: u.key,
        json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }] },
      });
    expect((await chat()).status).toBe(200);
    sim.setMode('error');
    expect((await chat()).status).toBeGreaterThanOrEqual(500);
    sim.setMode('ok');
    const text = await metrics();
    expect(text).toContain('# TYPE agw_upstream_calls_total counter');
    expect(sample(text, 'agw_upstream_calls_total{provider="openai",outcome="ok"}')).toBe(1);
    const failed = text.split('\n').filter((l) => l.startsWith('agw_upstream_calls_total{provider="openai",') && !l.includes('outcome="ok"'));
    expect(failed).toHaveLength(1);
    expect(sample(text, 'agw_upstream_duration_seconds_count{provider="openai"}')).toBe(2);
  });

  it('is valid Prometheus text: every sample line is name{labels} value', async () => {
    for (const line of (await metrics()).split('\n')) {
      if (line === '' || line.startsWith('# HELP ') || line.startsWith('# TYPE ')) continue;
      expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? -?[0-9.e+-]+$/);
    }
  });
});
