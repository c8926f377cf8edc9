/**
 * `agw login` in the browser: OAuth 2.0 authorization code grant with PKCE (RFC 7636) for
 * the daemon's built-in public client `agw-cli`, redirected to a loopback port of this
 * process (RFC 8252 §7.3). No client secret exists; the code is useless without the
 * verifier, which never leaves this process.
 */
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { CliError } from './errors.js';
import type { OAuthTokens } from './credentials.js';

export const CLI_CLIENT_ID = 'agw-cli';
export const LOGIN_SCOPE = 'openid profile email tier';
const LOGIN_TIMEOUT_MS = 5 * 60_000;
const HTTP_TIMEOUT_MS = 30_000;

export interface LoginOptions {
  /** The daemon: `http://host:port` (a trailing `/api` is accepted). */
  baseUrl: string;
  /** Opens the URL in a browser; a `false` answer (or a throw) prints the URL instead. */
  openBrowser?: (url: string) => unknown;
  /** Where progress lines go (stderr in the CLI). */
  log?: (line: string) => void;
  timeoutMs?: number;
}

interface Metadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
}

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  scope?: string;
  id_token?: string;
  error?: string;
  error_description?: string;
}

const rootOf = (baseUrl: string) => baseUrl.replace(/\/+$/, '').replace(/\/api$/, '');
const random = () => randomBytes(32).toString('base64url');

async function getJson<T>(url: string, init: RequestInit = {}): Promise<{ status: number; body: T }> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(HTTP_TIMEOUT_MS) });
  } catch (e) {
    const why = (e as { cause?: { code?: string } }).cause?.code ?? (e as Error).message;
    throw new CliError(`cannot reach ${new URL(url).origin}: ${why}`, 'is the daemon running? start it with: agw serve', 'NETWORK_ERROR');
  }
  const body = (await res.json().catch(() => undefined)) as T | undefined;
  if (body === undefined) throw new CliError(`${url} answered ${res.status} without JSON`, undefined, 'BAD_RESPONSE');
  return { status: res.status, body };
}

async function discover(baseUrl: string): Promise<Metadata> {
  const { status, body } = await getJson<Metadata>(`${rootOf(baseUrl)}/.well-known/openid-configuration`);
  if (status !== 200 || !body.authorization_endpoint || !body.token_endpoint) {
    throw new CliError(`${rootOf(baseUrl)} has no OpenID Connect discovery document (HTTP ${status})`, 'is this an agw daemon?', 'OAUTH_UNAVAILABLE');
  }
  return body;
}

async function tokenRequest(meta: Metadata, form: Record<string, string>): Promise<OAuthTokens & { idToken?: string }> {
  const { status, body } = await getJson<TokenAnswer>(meta.token_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ ...form, client_id: CLI_CLIENT_ID }).toString(),
  });
  if (status !== 200 || !body.access_token) {
    const why = body.error_description ?? body.error ?? `HTTP ${status}`;
    if (body.error === 'invalid_grant') throw new CliError(`login refused: ${why}`, 'log in again: agw login', 'LOGIN_EXPIRED');
    throw new CliError(`token request failed: ${why}`, undefined, body.error ? `OAUTH_${body.error.toUpperCase()}` : `HTTP_${status}`);
  }
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token,
    expiresAt: Date.now() + (body.expires_in ?? 900) * 1000,
    scope: body.scope,
    idToken: body.id_token,
  };
}

/** Exchanges a refresh token for fresh tokens (the refresh token rotates: keep the new one). */
export async function refreshTokens(baseUrl: string, refreshToken: string): Promise<OAuthTokens> {
  const { idToken: _unused, ...tokens } = await tokenRequest(await discover(baseUrl), { grant_type: 'refresh_token', refresh_token: refreshToken });
  return tokens;
}

/** The platform's "open this URL" command; false when there is no way to show a browser. */
export async function defaultOpenBrowser(url: string): Promise<boolean> {
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  if (process.platform === 'linux' && !process.env.DISPLAY && !process.env.WAYLAND_DISPLAY) return false;
  return new Promise((resolve) => {
    try {
      const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
      child.once('error', () => resolve(false));
      child.once('spawn', () => {
        child.unref();
        resolve(true);
      });
    } catch {
      resolve(false);
    }
  });
}

function page(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
  res.end(`<!doctype html><meta charset="utf-8"><title>agw login</title><p style="font-family:sans-serif">${text}</p>`);
}

/**
 * Runs the browser login and resolves with the tokens. Listens on 127.0.0.1 (a free port)
 * for the redirect; a callback with a wrong `state` (or `iss`) is ignored, an `error` ends it.
 */
export async function loginWithBrowser(o: LoginOptions): Promise<OAuthTokens> {
  const log = o.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const meta = await discover(o.baseUrl);
  const verifier = random();
  const state = random();
  const nonce = random();
  let settle!: { ok: (code: string) => void; fail: (e: Error) => void };
  const gotCode = new Promise<string>((ok, fail) => (settle = { ok, fail }));
  gotCode.catch(() => undefined); // may settle before it is awaited

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || u.pathname !== '/callback') return page(res, 404, 'Not found.');
    const q = u.searchParams;
    if (q.get('state') !== state || (q.has('iss') && q.get('iss') !== meta.issuer)) {
      return page(res, 400, 'This login answer does not belong to the running <code>agw login</code>. Start it again.');
    }
    const error = q.get('error');
    if (error) {
      page(res, 400, 'Login was not completed. You can close this tab.');
      return settle.fail(new CliError(`login failed: ${error}${q.get('error_description') ? ` (${q.get('error_description')})` : ''}`, 'run agw login again', 'LOGIN_FAILED'));
    }
    const code = q.get('code');
    if (!code) return page(res, 400, 'The answer has no code.');
    page(res, 200, 'You are logged in to agw. You can close this tab and return to the terminal.');
    settle.ok(code);
  });
  await new Promise<void>((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', () => ok()));
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  const timer = setTimeout(
    () => settle.fail(new CliError('timed out waiting for the browser login', 'run agw login again and finish it in the browser', 'LOGIN_TIMEOUT')),
    o.timeoutMs ?? LOGIN_TIMEOUT_MS,
  );
  try {
    const url = new URL(meta.authorization_endpoint);
    const params = {
      response_type: 'code',
      client_id: CLI_CLIENT_ID,
      redirect_uri: redirectUri,
      scope: LOGIN_SCOPE,
      state,
      nonce,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    const opened = await Promise.resolve()
      .then(() => (o.openBrowser ?? defaultOpenBrowser)(url.toString()))
      .catch(() => false);
    if (opened === false) log(`Open this URL in your browser to log in:\n  ${url}`);
    else log(`Opened your browser to log in. If it did not open, visit:\n  ${url}`);
    log('Waiting for the browser login to finish…');
    const code = await gotCode;
    const tokens = await tokenRequest(meta, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, code_verifier: verifier });
    if (tokens.idToken && decodeJwt(tokens.idToken).nonce !== nonce) {
      throw new CliError('the ID token does not carry this login’s nonce', undefined, 'LOGIN_FAILED');
    }
    const { idToken: _unused, ...out } = tokens;
    return out;
  } finally {
    clearTimeout(timer);
    server.closeAllConnections();
    server.close();
  }
}
