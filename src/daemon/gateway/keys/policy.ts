import type { IncomingHttpHeaders } from 'node:http';

/**
 * What makes a provider key sit out, and for how long, as data (undici's retry interceptor
 * keeps its `statusCodes`, `errorCodes`, `minTimeout`, `timeoutFactor` and `maxTimeout` the
 * same way). A key answered with one of `statusCodes` or a 5xx (`serverErrors`), or not
 * reached at all (`errorCodes`), cools down: for the answer's Retry-After when it gives
 * one, else `minTimeout` × `timeoutFactor`^(failures in a row − 1); never longer than
 * `maxTimeout`. The same call is then tried `retries` more time(s) on another key of the
 * provider that is neither cooling nor at its rpm/tpm limit; with `retryServerErrors` off,
 * only after a status of `statusCodes` or a connection never made (`unsentCodes`): a 5xx or
 * a connection broken after the request was sent may have run, and been billed, upstream.
 */
export interface KeyPolicy {
  statusCodes: readonly number[];
  serverErrors: boolean;
  errorCodes: readonly string[];
  /** connection failures before the request was sent (a subset of errorCodes) */
  unsentCodes: readonly string[];
  retryServerErrors: boolean;
  retries: number;
  minTimeout: number;
  timeoutFactor: number;
  maxTimeout: number;
}

export const KEY_POLICY: Omit<KeyPolicy, 'minTimeout' | 'maxTimeout' | 'retryServerErrors'> = {
  statusCodes: [429],
  serverErrors: true,
  // no connection: refused, reset before an answer, no such host, unreachable, connect timeout
  errorCodes: ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET'],
  // of those, the ones where nothing reached the provider
  unsentCodes: ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'],
  retries: 1,
  timeoutFactor: 2,
};

/** The policy with the config's `gateway.keyCooldownMs` / `keyCooldownMaxMs` / `keyRetryServerErrors`. */
export function keyPolicy(g: { keyCooldownMs: number; keyCooldownMaxMs: number; keyRetryServerErrors: boolean }): KeyPolicy {
  return { ...KEY_POLICY, minTimeout: g.keyCooldownMs, maxTimeout: g.keyCooldownMaxMs, retryServerErrors: g.keyRetryServerErrors };
}

export function failedStatus(p: KeyPolicy, status: number): boolean {
  return (p.serverErrors && status >= 500) || p.statusCodes.includes(status);
}

/** Whether a try answered `status` is tried again on another key (a failed status; a 5xx only with retryServerErrors). */
export function retriedStatus(p: KeyPolicy, status: number): boolean {
  return failedStatus(p, status) && (status < 500 || p.retryServerErrors);
}

/** Whether a try that failed to connect is tried again (a connection broken after sending only with retryServerErrors). */
export function retriedConnection(p: KeyPolicy, err: unknown): boolean {
  return failedConnection(p, err) && (p.retryServerErrors || failedConnection({ ...p, errorCodes: p.unsentCodes }, err));
}

/** True when an upstream error means the key's upstream was not reached (a connection failure). */
export function failedConnection(p: KeyPolicy, err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (typeof e.code === 'string' && p.errorCodes.includes(e.code)) return true;
  }
  return false;
}

/**
 * How long the answer asks to wait, in ms: `retry-after-ms` (OpenAI), else `Retry-After` as
 * seconds or an HTTP-date; undefined when it says nothing usable.
 */
export function retryAfterMs(headers: IncomingHttpHeaders | undefined, now: number): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers['retry-after-ms']);
  if (typeof headers['retry-after-ms'] === 'string' && Number.isFinite(ms) && ms >= 0) return ms;
  const ra = headers['retry-after'];
  if (typeof ra !== 'string' || !ra.trim()) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The cooldown of a key that just failed for the `streak`-th time in a row. */
export function cooldownMs(p: KeyPolicy, streak: number, asked: number | undefined): number {
  const backoff = p.minTimeout * p.timeoutFactor ** Math.min(Math.max(0, streak - 1), 30);
  return Math.min(asked ?? backoff, p.maxTimeout);
}
