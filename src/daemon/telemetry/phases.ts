import { channel } from 'node:diagnostics_channel';

/**
 * Marks along a gateway call's path, in the order a JSON call passes them. Each is
 * published on the diagnostics channel `agw:call:phase` (the message: the mark's name) when
 * something subscribes, which bench/timeline-hook.mjs does to time a call inside agw beside
 * Node's and undici's own marks (request in, upstream request made, answer headers, ...).
 * Without a subscriber a mark costs one property read.
 */
export type CallPhase =
  /** the caller's credential is known good (gateway/auth.ts) */
  | 'authenticated'
  /** the request's body is received whole, before anything parses it (the proxy's raw body) */
  | 'body'
  /** a JSON body is received and parsed; its checks and schema validation come next (chat routes) */
  | 'parsed'
  /** the route's handler starts: the body is read, parsed and valid */
  | 'handling'
  /** the call's money is about to be admitted (money/calls.ts reserve) */
  | 'admitting'
  /** admitted: quota unit, wallet, key budget held */
  | 'admitted'
  /** the upstream request is about to be made (gateway/relay.ts Call.send) */
  | 'sending'
  /** a JSON answer is read whole */
  | 'answer-read'
  /** the call's cost is known and its booking starts (money/calls.ts finalize) */
  | 'booking'
  /** the booking's journal line is written (SQLite) */
  | 'journaled'
  /** the booking is settled: the answer may go out */
  | 'booked'
  /** the answer is handed to the HTTP server */
  | 'answered';

const phases = channel('agw:call:phase');

export function markPhase(p: CallPhase): void {
  if (phases.hasSubscribers) phases.publish(p);
}
