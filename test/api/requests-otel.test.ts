import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.js';
import { telemetryOf } from '../../src/daemon/telemetry/index.js';

/**
 * OpenTelemetry (telemetry.otlpEndpoint): one span per gateway call exported over
 * OTLP/HTTP to a receiver on loopback, with the GenAI semantic-convention attributes and
 * agw's own; the caller's W3C traceparent is the span's parent and the upstream gets the
 * span as its parent; without one a trace starts. With telemetry off nothing of it runs
 * and the caller's traceparent reaches the upstream unchanged.
 */
const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const messages = [{ role: 'user', content: 'Trace me.' }];
const TP = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

describe('telemetry on', () => {
  let rx: OtlpReceiver;
  let f: GatewayFixture;
  beforeAll(async () => {
    rx = await startOtlpReceiver();
    f = await startGatewayFixture({ yaml: `telemetry:\n  otlpEndpoint: ${rx.url}\n  headers:\n    x-collector-token: t0ken\n  serviceName: agw-test\n` });
  });
  afterAll(async () => {
    await f?.close();
    await rx?.close();
  });

  test('a chat call with a traceparent: its span is the caller’s child and the upstream call’s parent, with the GenAI attributes', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await f.d.fetch('/gateway/chat', {
      method: 'POST',
      key: u.key,
      headers: { traceparent: `00-${TRACE}-${PARENT}-01` },
      json: { model: 'smart-lite', messages },
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    const id = res.headers.get('x-request-id')!;
    const upstream = TP.exec(String(f.openai.requests.at(-1)!.headers.traceparent));
    expect(upstream?.[1]).toBe(TRACE);
    expect(upstream?.[2]).not.toBe(PARENT);

    const span = await rx.waitForSpan((s) => s.attributes['agw.request_id'] === id);
    expect(span).toMatchObject({ traceId: TRACE, parentSpanId: PARENT, spanId: upstream![2], name: 'chat smart-lite', kind: 3 });
    const record = (await (await f.d.fetch(`/requests/${id}`, { key: u.key })).json()) as any;
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'smart-lite',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': body.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': body.usage.completion_tokens,
      'agw.cost_usd': record.cost,
      'agw.alias': 'smart-lite',
      'agw.request_id': id,
      'agw.endpoint': 'chat',
      'http.response.status_code': 200,
    });
    expect(span.attributes['agw.cost_usd']).toBeGreaterThan(0);
    expect(span.resource['service.name']).toBe('agw-test');
    expect(rx.requests[0]).toMatchObject({ path: '/v1/traces' });
    expect(rx.requests[0].contentType).toContain('json');
    expect(rx.requests[0].headers['x-collector-token']).toBe('t0ken');
    expect(Number(BigInt(span.endTimeUnixNano) - BigInt(span.startTimeUnixNano)) / 1e6).toBeGreaterThanOrEqual(record.latencyMs - 5);
  });

  test('without a traceparent a new trace starts, passed upstream; the proxy’s upstream gets the span too', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await f.d.fetch('/external/openai/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    const upstream = TP.exec(String(f.openai.requests.at(-1)!.headers.traceparent))!;
    expect(upstream).not.toBeNull();
    const span = await rx.waitForSpan((s) => s.attributes['agw.request_id'] === id);
    expect(span.traceId).toBe(upstream[1]);
    expect(span.spanId).toBe(upstream[2]);
    expect(span.parentSpanId || undefined).toBeUndefined();
    expect(span.attributes).toMatchObject({ 'gen_ai.request.model': 'gpt-4o-mini', 'agw.endpoint': 'proxy' });
  });

  test('a refused call has a span too, marked as an error with agw’s code', async () => {
    const poor = await f.d.user({ tier: 'free' });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: poor.key, json: { model: 'gpt-4o-mini', messages } });
    expect(res.status).toBe(402);
    const span = await rx.waitForSpan((s) => s.attributes['agw.request_id'] === res.headers.get('x-request-id'));
    expect(span.attributes).toMatchObject({ 'error.type': 'INSUFFICIENT_FUNDS', 'http.response.status_code': 402, 'agw.cost_usd': 0 });
    expect(span.status?.code).toBe(2);
  });
});

describe('telemetry off (the default)', () => {
  let f: GatewayFixture;
  beforeAll(async () => {
    f = await startGatewayFixture();
  });
  afterAll(() => f?.close());

  test('no span hook; the caller’s traceparent reaches the upstream as it came, and none is made up', async () => {
    expect(telemetryOf(f.d.daemon.ctx)).toBeUndefined();
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const tp = `00-${TRACE}-${PARENT}-01`;
    await (await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, headers: { traceparent: tp }, json: { model: 'gpt-4o-mini', messages } })).text();
    expect(f.openai.requests.at(-1)!.headers.traceparent).toBe(tp);
    await (await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } })).text();
    expect(f.openai.requests.at(-1)!.headers.traceparent).toBeUndefined();
  });
});
