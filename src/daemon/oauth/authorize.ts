import { AgwError } from '../../shared/errors.js';
import type { Queryable } from '../store/db.js';
import { getClient, redirectUriAllowed, type OAuthClient } from './clients.js';

/** The scopes of the spec. `tier` lets an access token read entitlements. */
export const SCOPES = ['openid', 'profile', 'email', 'tier'] as const;
export const DEFAULT_SCOPE = 'openid';
const MAX_PARAM = 1024;

/** The parameters of an authorization request (GET query or the consent form). */
export interface AuthorizeParams {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  scope?: string;
  state?: string;
  nonce?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  prompt?: string;
}

export const AUTHORIZE_PARAM_NAMES = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'prompt',
] as const satisfies readonly (keyof AuthorizeParams)[];

/** An error sent back to the client's redirect URI (RFC 6749 §4.1.2.1). */
export interface RedirectError {
  error: 'invalid_request' | 'unsupported_response_type' | 'invalid_scope' | 'access_denied' | 'login_required' | 'consent_required';
  description: string;
}

export interface ValidRequest {
  client: OAuthClient;
  redirectUri: string;
  scope: string;
  state?: string;
  nonce?: string;
  codeChallenge: string;
}

/**
 * Checks the client and the redirect URI. These errors are shown to the user and never
 * redirected: a bad redirect URI must not be sent anywhere.
 */
export async function checkClient(q: Queryable, p: AuthorizeParams): Promise<{ client: OAuthClient; redirectUri: string }> {
  if (!p.client_id) throw new AgwError('INVALID_CLIENT', 'client_id is required');
  const client = await getClient(q, p.client_id);
  if (!client) throw new AgwError('INVALID_CLIENT', `unknown client_id ${JSON.stringify(p.client_id.slice(0, 100))}`);
  if (!p.redirect_uri) throw new AgwError('INVALID_REDIRECT_URI', 'redirect_uri is required');
  if (!redirectUriAllowed(client, p.redirect_uri)) {
    throw new AgwError('INVALID_REDIRECT_URI', `redirect_uri is not registered for client ${client.clientId}`);
  }
  return { client, redirectUri: p.redirect_uri };
}

/** Checks the rest of the request; a failure here goes back to the (valid) redirect URI. */
export function checkRequest(
  base: { client: OAuthClient; redirectUri: string },
  p: AuthorizeParams,
): { ok: true; req: ValidRequest } | { ok: false; err: RedirectError } {
  const fail = (error: RedirectError['error'], description: string) => ({ ok: false as const, err: { error, description } });
  if (p.response_type !== 'code') return fail('unsupported_response_type', 'response_type must be code');
  for (const name of ['state', 'nonce', 'scope'] as const) {
    if ((p[name]?.length ?? 0) > MAX_PARAM) return fail('invalid_request', `${name} is longer than ${MAX_PARAM} characters`);
  }
  if (!p.code_challenge) return fail('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256');
  if (p.code_challenge_method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256 (plain is not supported)');
  if (!/^[A-Za-z0-9_-]{43}$/.test(p.code_challenge)) return fail('invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
  const asked = (p.scope ?? DEFAULT_SCOPE).split(' ').filter(Boolean);
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) return fail('invalid_scope', `unknown scope ${unknown.join(' ')}; supported: ${SCOPES.join(' ')}`);
  if (asked.length === 0) return fail('invalid_scope', 'scope is empty');
  const scope = SCOPES.filter((s) => asked.includes(s)).join(' ');
  return {
    ok: true,
    req: { ...base, scope, state: p.state || undefined, nonce: p.nonce || undefined, codeChallenge: p.code_challenge },
  };
}

/** The redirect URI with the response parameters added to its query. */
export function redirectTo(redirectUri: string, params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

/** Keeps only the authorization parameters (string values) of a query or form body. */
export function pickParams(src: unknown): AuthorizeParams {
  const out: AuthorizeParams = {};
  const o = (src ?? {}) as Record<string, unknown>;
  for (const k of AUTHORIZE_PARAM_NAMES) if (typeof o[k] === 'string') out[k] = o[k] as string;
  return out;
}
