import type { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context/index.js';
import type { Booking } from '../money/bookings.js';
import type { Reservation } from '../money/calls.js';
import { telemetryOf } from '../telemetry/index.js';
import { CallBodies, redactorOf, type KeptBodies } from './bodies.js';

/**
 * The request log's two hooks on a gateway call (money/calls.ts calls them; the record
 * itself is the call's booking and rides in its batch, no write of its own):
 *   observe — when the call starts: its request body (logs.bodies only), its span
 *             (telemetry only), the traceparent sent upstream (the span's, else the
 *             caller's as it came).
 *   settled — once, when it settles (finalized, failed or refused): the token and cost
 *             counters of /api/metrics, and the span ended with the booking's figures.
 * With logs.bodies off and no telemetry both are a few property reads.
 */
export function observe(ctx: AppContext, r: Reservation, input: { body?: Buffer | string | object; traceparent?: string | string[] }): void {
  if (ctx.config.logs.bodies) r.bodies = new CallBodies(input.body);
  const tp = typeof input.traceparent === 'string' ? input.traceparent : undefined;
  const telemetry = telemetryOf(ctx);
  if (telemetry) {
    r.span = telemetry.startCall(r, tp);
    r.traceparent = r.span.traceparent;
  } else r.traceparent = tp;
}

export function settled(ctx: AppContext, r: Reservation, b: Booking): void {
  try {
    if (b.status === 'finalized') ctx.metrics.observeCall(b.providerId, b.model, b.promptTokens, b.completionTokens, b.cachedTokens, b.customerNano);
    r.span?.end(b);
  } catch (err) {
    ctx.log.error({ err }, 'observing a settled gateway call failed');
  }
}

/** The bodies as kept: an answer agw made itself (a refusal, an upstream failure) is its Error body. */
export function keptBodies(ctx: AppContext, bodies: CallBodies, err: AgwError | undefined): KeptBodies {
  if (err && bodies.response.empty) bodies.response.push(JSON.stringify(err.toBody()));
  return bodies.keep(redactorOf(ctx.config));
}
