import type { IncomingHttpHeaders } from 'node:http';

/**
 * What makes a provider key sit out, and for how long, as data (undici's retry interceptor
 * keeps its `statusCodes`, `errorCodes`, `minTimeout`, `timeoutFactor` and `maxTimeout` the
 * same way). A key answered with one of `statusCodes` or a 5xx (`serverErrors`), or not
 * reached at all (`errorCodes`), cools down: for the answer's Retry-After when it gives
 * one, else `minTimeout` × `timeoutFactor`^(failures in a row − 1); never longer than
 * `maxTimeout`. The same call is then tried `retries` more time(s) on another key of the
 * provider that is neither cooling nor at its rpm/tpm limit.
 */
export interface KeyPolicy {
  statusCodes: readonly number[];
  serverErrors: boolean;
  errorCodes: readonly string[];
  retries: number;
  minTimeout: number;
  timeoutFactor: number;
  maxTimeout: number;
}

export const KEY_POLICY: Omit<KeyPolicy, 'minTimeout' | 'maxTimeout'> = {
  statusCodes: [429],
  serverErrors: true,
  // no connection: refused, reset before an answer, no such host, unreachable, connect timeout
  errorCodes: ['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_SOCKET'],
  retries: 1,
  timeoutFactor: 2,
};

/** The policy with the config's `gateway.keyCooldownMs` / `keyCooldownMaxMs`. */
export function keyPolicy(g: { keyCooldownMs: number; keyCooldownMaxMs: number }): KeyPolicy {
  return { ...KEY_POLICY, minTimeout: g.keyCooldownMs, maxTimeout: g.keyCooldownMaxMs };
}

export function failedStatus(p: KeyPolicy, status: number): boolean {
  return (p.serverErrors && status >= 500) || p.statusCodes.includes(status);
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
