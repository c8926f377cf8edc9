/**
 * The HTTP client of the account and marketplace commands: base URL and credentials from
 * the profile, the server's Error body turned into a CliError (message, code, hint).
 */
import { CliError } from './errors.js';
import { resolveAuth, type AuthState, type GlobalOpts } from './auth.js';
import { hintFor, type ErrorInfo } from './hints.js';

/**
 * none: send nothing; optional: bearer when there is one; bearer: key or OAuth token only
 * (gateway endpoints); account: bearer, else the portal session; session: portal session only.
 */
export type AuthMode = 'none' | 'optional' | 'bearer' | 'account' | 'session';

export interface RequestOpts {
  auth?: AuthMode;
  query?: Record<string, string | number | boolean | undefined>;
  json?: unknown;
  body?: BodyInit;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class Api {
  private csrf?: string;

  constructor(readonly auth: AuthState) {}

  static async open(opts: GlobalOpts): Promise<Api> {
    return new Api(await resolveAuth(opts));
  }

  get baseUrl(): string {
    return this.auth.target.baseUrl;
  }

  url(path: string, query?: RequestOpts['query']): string {
    const u = new URL(`${this.baseUrl}/api${path}`);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== '') u.searchParams.set(k, String(v));
    return u.toString();
  }

  private async authHeaders(mode: AuthMode, method: string): Promise<Record<string, string>> {
    const { bearer, session } = this.auth;
    const cookie = async (): Promise<Record<string, string>> => {
      const h: Record<string, string> = { cookie: `service_session=${encodeURIComponent(session!.cookie)}` };
      if (method !== 'GET' && method !== 'HEAD') {
        this.csrf ??= await this.fetchCsrf(h.cookie);
        if (this.csrf) h['x-csrf-token'] = this.csrf;
      }
      return h;
    };
    switch (mode) {
      case 'none':
        return {};
      case 'optional':
        return bearer ? { authorization: `Bearer ${bearer.token}` } : {};
      case 'bearer':
      case 'account':
        if (bearer) return { authorization: `Bearer ${bearer.token}` };
        if (mode === 'account' && session) return cookie();
        throw new CliError(
          session ? 'this command needs an agw_ key or an OAuth login (a portal session is not enough)' : 'not logged in',
          'log in: agw login --with-token < key.txt (or set AGW_API_KEY)',
          'NOT_LOGGED_IN',
        );
      case 'session':
        if (session) return cookie();
        throw new CliError(
          'this command needs a portal session (the server does not accept keys here)',
          'log in to the portal: agw login --email YOU@example.com (password on stdin or prompted)',
          'NO_SESSION',
        );
    }
  }

  /** The session's CSRF token for state-changing requests (from GET /portal/me). */
  private async fetchCsrf(cookie: string): Promise<string | undefined> {
    try {
      const res = await fetch(this.url('/portal/me'), { headers: { cookie }, signal: AbortSignal.timeout(5000) });
      const body = (await res.json().catch(() => ({}))) as { csrfToken?: string };
      return res.headers.get('x-csrf-token') ?? body.csrfToken;
    } catch {
      return undefined;
    }
  }

  /** Send a request; resolves with the (2xx) Response, throws a CliError otherwise. */
  async send(method: string, path: string, o: RequestOpts = {}): Promise<Response> {
    const mode = o.auth ?? 'account';
    const headers: Record<string, string> = { accept: 'application/json', ...(await this.authHeaders(mode, method)), ...o.headers };
    let body = o.body;
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(o.json);
    }
    // timeoutMs 0: none (a stream that stays open, e.g. agw logs --follow)
    const signal = o.timeoutMs === 0 ? undefined : AbortSignal.timeout(o.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const init: RequestInit & { duplex?: 'half' } = { method, headers, body, signal };
    if (body instanceof ReadableStream) init.duplex = 'half';
    let res: Response;
    try {
      res = await fetch(this.url(path, o.query), init);
    } catch (e) {
      throw this.networkError(e);
    }
    if (res.ok) return res;
    throw await this.errorFrom(res, mode);
  }

  /** Send and parse the JSON answer. */
  async json<T>(method: string, path: string, o: RequestOpts = {}): Promise<T> {
    const res = await this.send(method, path, o);
    try {
      return (await res.json()) as T;
    } catch {
      throw new CliError(`${method} ${path}: the server answered ${res.status} without valid JSON`, undefined, 'BAD_RESPONSE');
    }
  }

  get<T>(path: string, o: RequestOpts = {}): Promise<T> {
    return this.json<T>('GET', path, o);
  }

  networkError(e: unknown): CliError {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    if (err.name === 'TimeoutError' || err.name === 'AbortError') {
      return new CliError(`${this.baseUrl} did not answer in time`, 'is the daemon busy or down? check agw serve', 'TIMEOUT');
    }
    const why = err.cause?.code ?? err.cause?.message ?? err.message;
    return new CliError(
      `cannot reach ${this.baseUrl}: ${why}`,
      'is the daemon running? start it with: agw serve (or point --base-url / AGW_BASE_URL at it)',
      'NETWORK_ERROR',
    );
  }

  /** Which credential a request of this mode carried (authHeaders' choice), for the hint of a 401. */
  private credentialSent(mode: AuthMode): ErrorInfo['credential'] {
    const { bearer, session } = this.auth;
    if (mode === 'none') return 'none';
    if (mode === 'session') return session ? 'session' : 'none';
    if (bearer) return bearer.kind === 'oauth' ? 'oauth' : bearer.source === 'env' ? 'env-key' : 'stored-key';
    return mode === 'account' && session ? 'session' : 'none';
  }

  private async errorFrom(res: Response, mode: AuthMode): Promise<CliError> {
    const text = await res.text().catch(() => '');
    let body: { error?: unknown; code?: unknown; details?: unknown } = {};
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      // not the Error body (a proxy, or a route that does not exist yet)
    }
    const info: ErrorInfo = {
      status: res.status,
      code: typeof body.code === 'string' ? body.code : undefined,
      message: typeof body.error === 'string' ? body.error : `HTTP ${res.status} ${res.statusText}`.trim(),
      details: body.details && typeof body.details === 'object' ? (body.details as Record<string, unknown>) : undefined,
      retryAfter: res.headers.get('retry-after'),
      auth: mode,
      credential: this.credentialSent(mode),
    };
    const resetsAt = info.code === 'QUOTA_EXCEEDED' ? await this.quotaResetsAt() : undefined;
    const err = new CliError(info.message, hintFor(info, resetsAt), info.code ?? `HTTP_${res.status}`);
    return Object.assign(err, { status: res.status, details: info.details });
  }

  /** When the quota period ends (one cheap call; undefined when it fails). */
  private async quotaResetsAt(): Promise<string | undefined> {
    if (!this.auth.bearer) return undefined;
    try {
      const res = await fetch(this.url('/gateway/entitlements'), {
        headers: { authorization: `Bearer ${this.auth.bearer.token}` },
        signal: AbortSignal.timeout(3000),
      });
      const e = (await res.json()) as { period?: { resetsAt?: string } };
      return e.period?.resetsAt;
    } catch {
      return undefined;
    }
  }
}

/** A server error's details (e.g. INVALID_BUNDLE problems), when a CliError came from the API. */
export function errorDetails(e: unknown): Record<string, unknown> | undefined {
  return (e as { details?: Record<string, unknown> }).details;
}
