import { EventEmitter } from 'node:events';
import { Pool, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { ResolvedProvider } from '../../shared/config/resolve.js';
import type { SecretRedactor } from '../../shared/secret-redactor.js';
import { UpstreamAnswer } from './upstream-answer.js';

/**
 * Upstream connections: one keep-alive undici Pool per origin, created on first use and
 * kept for the daemon's life, with the config's connect and response timeouts. Failures
 * are classified by code (never by message) so callers decide refunds and failover on a
 * stable outcome.
 */
export type UpstreamOutcome = 'ok' | 'http_4xx' | 'http_5xx' | 'rate_limited' | 'timeout' | 'connect_error' | 'aborted';
export type FailureOutcome = 'timeout' | 'connect_error' | 'aborted';

export class UpstreamError extends Error {
  constructor(
    readonly outcome: FailureOutcome,
    readonly cause: unknown,
  ) {
    super(`upstream ${outcome}: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'UpstreamError';
  }
}

/**
 * The abort switch of one upstream request: what undici accepts as a signal (an
 * EventEmitter with `aborted` and `reason`), without an AbortController, whose creation
 * and listener bookkeeping cost ~4.6 µs per call against ~0.1 µs for this (measured on
 * Node 20), on the path every gateway call takes.
 */
export class UpstreamAbort extends EventEmitter {
  aborted = false;
  /** undefined: undici rejects with its own RequestAbortedError (UND_ERR_ABORTED) */
  readonly reason: unknown = undefined;

  abort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.emit('abort');
  }
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'ETIMEDOUT']);

export function classifyFailure(err: unknown, signal?: { readonly aborted: boolean }): FailureOutcome {
  if (signal?.aborted) return 'aborted';
  const code = (err as { code?: string })?.code;
  if (code && TIMEOUT_CODES.has(code)) return 'timeout';
  if (code === 'UND_ERR_ABORTED' || (err as Error)?.name === 'AbortError') return 'aborted';
  return 'connect_error';
}

export function outcomeOfStatus(status: number): UpstreamOutcome {
  if (status < 400) return 'ok';
  if (status === 429) return 'rate_limited';
  return status >= 500 ? 'http_5xx' : 'http_4xx';
}

export interface UpstreamRequest {
  method: 'GET' | 'POST';
  /** the provider's own path (starts with '/'), without query */
  path: string;
  /** raw query string without '?', passed unchanged */
  query?: string;
  headers: Record<string, string>;
  body?: Buffer | string;
  signal?: UpstreamAbort;
}

export interface UpstreamTimeouts {
  connectTimeoutMs: number;
  responseTimeoutMs: number;
}

export interface Base {
  origin: string;
  /** host[:port] as the request's Host header carries it */
  host: string;
  basePath: string;
}

export class Upstreams {
  private readonly pools = new Map<string, Pool>();
  private readonly bases = new Map<string, Base>();

  constructor(private readonly timeouts: UpstreamTimeouts) {}

  base(baseUrl: string): Base {
    let b = this.bases.get(baseUrl);
    if (!b) {
      const u = new URL(baseUrl);
      b = { origin: u.origin, host: u.host, basePath: u.pathname.replace(/\/+$/, '') };
      this.bases.set(baseUrl, b);
    }
    return b;
  }

  private pool(origin: string): Pool {
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connect: { timeout: this.timeouts.connectTimeoutMs },
        headersTimeout: this.timeouts.responseTimeoutMs,
        bodyTimeout: this.timeouts.responseTimeoutMs,
      });
      this.pools.set(origin, p);
    }
    return p;
  }

  /**
   * Sends one request to `provider` with its own credentials (a query-parameter key: `apiKey`,
   * the provider's first key unless another is given); throws UpstreamError on failure. The
   * answer's body stream is made only when read as one (upstream-answer.ts).
   */
  async request(provider: ResolvedProvider, r: UpstreamRequest, apiKey = provider.apiKey): Promise<Dispatcher.ResponseData> {
    const { origin, basePath } = this.base(provider.baseUrl);
    const auth = provider.def.auth;
    let query = r.query ?? '';
    if (auth.style === 'query' && apiKey) {
      query = `${query ? `${query}&` : ''}${encodeURIComponent(auth.param)}=${encodeURIComponent(apiKey)}`;
    }
    const path = `${basePath}${r.path}${query ? `?${query}` : ''}`;
    try {
      return await new Promise<Dispatcher.ResponseData>((resolve, reject) => {
        const answer = new UpstreamAnswer({ resolve, reject }, r.signal);
        try {
          this.pool(origin).dispatch({ origin, method: r.method, path, headers: r.headers, body: r.body }, answer);
        } catch (err) {
          // undici reports a refused request (invalid headers, a closed pool) through onError; a throw goes the same way
          answer.onError(err as Error);
        }
      });
    } catch (err) {
      throw new UpstreamError(classifyFailure(err, r.signal), err);
    }
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy().catch(() => undefined)));
  }
}

/** The provider's own credentials and required headers, in place of the caller's. */
export function providerAuthHeaders(provider: ResolvedProvider, headers: Record<string, string>, apiKey = provider.apiKey): void {
  const { def } = provider;
  for (const [k, v] of Object.entries(def.extraHeaders ?? {})) {
    const name = k.toLowerCase();
    if (headers[name] === undefined) headers[name] = v;
  }
  if (!apiKey) return;
  const auth = def.auth;
  if (auth.style === 'bearer') headers.authorization = `Bearer ${apiKey}`;
  else if (auth.style === 'header') headers[auth.header.toLowerCase()] = `${auth.prefix ?? ''}${apiKey}`;
}

/** Request headers never forwarded: the caller's credentials, hop-by-hop and recomputed ones. */
const BLOCKED_REQUEST = new Set([
  'authorization', 'x-api-key', 'cookie', 'host', 'connection', 'keep-alive', 'proxy-authorization',
  'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect', 'content-length',
  'accept-encoding', 'x-service-project-id', 'x-csrf-token', 'forwarded', 'x-forwarded-for',
  'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip',
]);

/** The caller's headers that may go upstream (content-type, accept, provider version headers, ...). */
export function forwardableHeaders(incoming: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in incoming) {
    if (BLOCKED_REQUEST.has(name)) continue;
    const v = incoming[name];
    if (typeof v === 'string') out[name] = v;
    else if (Array.isArray(v)) out[name] = v.join(', ');
  }
  return out;
}

/** Response headers never passed back (hop-by-hop, recomputed, or cookies of the provider). */
const BLOCKED_RESPONSE = new Set([
  'connection', 'keep-alive', 'transfer-encoding', 'content-length', 'set-cookie', 'proxy-authenticate',
  'trailer', 'upgrade', 'date', 'server', 'alt-svc', 'strict-transport-security',
]);

/** The upstream's headers that go back to the caller, every provider secret in them redacted. */
export function passableHeaders(upstream: IncomingHttpHeaders, redact: SecretRedactor): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in upstream) {
    if (BLOCKED_RESPONSE.has(name) || redact.taints(name)) continue;
    const v = upstream[name];
    if (v !== undefined) out[name] = redact.headerValue(v);
  }
  return out;
}
