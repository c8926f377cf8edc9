import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { AppContext } from '../context/index.js';
import type { Booking } from '../money/bookings.js';
import type { Reservation } from '../money/calls.js';

/**
 * OpenTelemetry, opt-in (config telemetry.otlpEndpoint): one span per gateway call,
 * exported over OTLP/HTTP. This file imports nothing of OpenTelemetry: `startTelemetry`
 * loads ./otel.js (and with it the @opentelemetry packages) only when the daemon starts
 * with telemetry configured. Without it `telemetryOf(ctx)` is undefined and a call pays
 * one WeakMap lookup.
 */
export interface CallSpan {
  /** the W3C traceparent naming this span, sent upstream as the upstream call's parent */
  readonly traceparent: string;
  /** ends the span with the settled call's figures */
  end(b: Booking): void;
}

export interface Telemetry {
  /** starts the span of a call (`traceparent`: the caller's, its parent; else a new trace) */
  startCall(r: Reservation, traceparent: string | undefined): CallSpan;
  /** exports what is buffered and stops */
  shutdown(): Promise<void>;
}

const running = new WeakMap<AppContext, Telemetry>();

/** The daemon's telemetry, if it was started (kept here, not in AppContext: its types are the money's). */
export function telemetryOf(ctx: AppContext): Telemetry | undefined {
  return running.get(ctx);
}

export async function startTelemetry(ctx: AppContext, config: NonNullable<ResolvedConfig['telemetry']>, version: string): Promise<Telemetry> {
  const { createTelemetry } = await import('./otel.js');
  const t = createTelemetry(config, version);
  running.set(ctx, t);
  return t;
}

/** The collector URL: the OTLP/HTTP traces path is added to a base URL. */
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return /\/v1\/traces$/.test(base) ? base : `${base}/v1/traces`;
}
