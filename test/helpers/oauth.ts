import { createHash, randomBytes } from 'node:crypto';
import type { TestDaemon, TestUser } from './daemon.js';
import { createSession } from '../../src/daemon/auth/sessions.js';
import { upsertClient } from '../../src/daemon/oauth/clients.js';

/** OAuth test helpers: clients, a portal session, PKCE pairs, authorize and token calls. */

export const TRUSTED = { clientId: 'test-trusted', redirectUri: 'http://127.0.0.1:9/cb' };
export const UNTRUSTED = { clientId: 'test-untrusted', redirectUri: 'https://app.example.com/callback' };

export interface OAuthFixture {
  user: TestUser;
  /** `service_session=…` for the user's portal session */
  cookie: string;
  csrfToken: string;
}

export async function oauthFixture(d: TestDaemon, userOpts: Parameters<TestDaemon['user']>[0] = {}): Promise<OAuthFixture> {
  const db = d.daemon.ctx.db;
  await upsertClient(db, { clientId: TRUSTED.clientId, name: 'Trusted Test App', redirectUris: [TRUSTED.redirectUri], trusted: true });
  await upsertClient(db, { clientId: UNTRUSTED.clientId, name: 'Untrusted <App>', redirectUris: [UNTRUSTED.redirectUri], trusted: false });
  const user = await d.user({ tier: 'pro', balance: 5, ...userOpts });
  const s = await createSession(d.daemon.ctx, user.id);
  return { user, cookie: `service_session=${s.id}`, csrfToken: s.csrfToken };
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function authorizeUrl(d: TestDaemon, params: Record<string, string | undefined>): string {
  const u = new URL(`${d.api}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

/** A complete, valid authorization request for the trusted client (override any field). */
export function authParams(challenge: string, over: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return {
    response_type: 'code',
    client_id: TRUSTED.clientId,
    redirect_uri: TRUSTED.redirectUri,
    scope: 'openid profile email tier',
    state: 'st-123',
    nonce: 'n-456',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...over,
  };
}

/** GET the authorize URL like a browser with the session cookie; the raw response (no redirects followed). */
export function authorize(d: TestDaemon, cookie: string | undefined, params: Record<string, string | undefined>, accept = '*/*'): Promise<Response> {
  return fetch(authorizeUrl(d, params), { headers: { accept, ...(cookie ? { cookie } : {}) }, redirect: 'manual' });
}

/** Runs the authorize step of the trusted client and returns the code from the redirect. */
export async function getCode(d: TestDaemon, cookie: string, params: Record<string, string | undefined>): Promise<string> {
  const res = await authorize(d, cookie, params);
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}: ${await res.text()}`);
  const code = new URL(res.headers.get('location') ?? '').searchParams.get('code');
  if (!code) throw new Error(`no code in ${res.headers.get('location')}`);
  return code;
}

export async function tokenCall(
  d: TestDaemon,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }> {
  const res = await fetch(`${d.api}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
}

/** Code → tokens for the trusted client. */
export async function exchange(d: TestDaemon, code: string, verifier: string, over: Record<string, string> = {}) {
  return tokenCall(d, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: TRUSTED.redirectUri,
    client_id: TRUSTED.clientId,
    code_verifier: verifier,
    ...over,
  });
}
