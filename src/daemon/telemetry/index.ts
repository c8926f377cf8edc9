import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { Booking } from '../money/bookings.js';
import type { Reservation } from '../money/calls.js';

/**
 * OpenTelemetry, opt-in (config telemetry.otlpEndpoint): one span per gateway call,
 * exported over OTLP/HTTP. This file imports nothing of OpenTelemetry: `startTelemetry`
 * loads ./otel.js (and with it the @opentelemetry packages) only when the daemon starts
 * with telemetry configured. Without it ctx.telemetry stays undefined and a call pays
 * one property read.
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

export async function startTelemetry(config: NonNullable<ResolvedConfig['telemetry']>, version: string): Promise<Telemetry> {
  const { createTelemetry } = await import('./otel.js');
  return createTelemetry(config, version);
}

/** The collector URL: the OTLP/HTTP traces path is added to a base URL. */
export function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return /\/v1\/traces$/.test(base) ? base : `${base}/v1/traces`;
}
