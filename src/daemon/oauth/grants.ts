import type { AppContext } from '../context/index.js';
import { effectiveTier, userById } from '../store/users.js';
import { getClient } from './clients.js';
import { familyOfCode, redeemCode, sha256Hex, type Redeemed } from './codes.js';
import { issueRefreshToken, rotateRefreshToken, type Rotated } from './refresh.js';
import { tokenService, userClaims } from './service.js';
import { ACCESS_TOKEN_TTL_S } from './tokens.js';

/**
 * The token endpoint's grants. Failures are RFC 6749 §5.2 errors (`OAuthError`), the one
 * place where the body is the OAuth standard's and not the spec's Error body.
 */
export type OAuthErrorCode = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unsupported_grant_type' | 'invalid_scope';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status: 400 | 401 = error === 'invalid_client' ? 401 : 400,
  ) {
    super(description);
  }
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  id_token?: string;
}

const VERIFIER_RE = /^[A-Za-z0-9._~-]{43,128}$/;

function param(body: Record<string, unknown>, name: string, required: true): string;
function param(body: Record<string, unknown>, name: string, required: false): string | undefined;
function param(body: Record<string, unknown>, name: string, required: boolean): string | undefined {
  const v = body[name];
  if (v === undefined || v === '') {
    if (required) throw new OAuthError('invalid_request', `${name} is required`);
    return undefined;
  }
  if (typeof v !== 'string') throw new OAuthError('invalid_request', `${name} must be given once`);
  return v;
}

const CODE_FAILURES: Record<Exclude<Redeemed, { ok: true }>['reason'], string> = {
  unknown: 'the authorization code is not valid',
  reused: 'the authorization code was already used; tokens issued from it are revoked',
  expired: 'the authorization code expired (codes live 60 seconds)',
  client: 'the authorization code was issued to another client',
  redirect_uri: 'redirect_uri does not match the one of the authorization request',
  verifier: 'code_verifier does not match the code_challenge (PKCE S256)',
};

const REFRESH_FAILURES: Record<Exclude<Rotated, { ok: true }>['reason'], string> = {
  unknown: 'the refresh token is not valid',
  reused: 'the refresh token was already used; every token of its family is revoked, sign in again',
  revoked: 'the refresh token was revoked; sign in again',
  expired: 'the refresh token expired; sign in again',
  client: 'the refresh token was issued to another client',
  scope: 'scope may only narrow the scope originally granted',
};

async function issue(
  ctx: AppContext,
  g: { userId: string; clientId: string; scope: string; refreshToken: string; nonce?: string | null; withIdToken: boolean },
): Promise<TokenResponse> {
  const user = await userById(ctx.db, g.userId);
  const tier = user ? await effectiveTier(ctx.db, g.userId) : undefined;
  if (!user || !tier) throw new OAuthError('invalid_grant', 'the account no longer exists');
  const tokens = tokenService(ctx);
  const scopes = g.scope.split(' ');
  const out: TokenResponse = {
    access_token: await tokens.signAccessToken({ sub: user.id, clientId: g.clientId, scope: g.scope, tier }),
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_S,
    refresh_token: g.refreshToken,
    scope: g.scope,
  };
  if (g.withIdToken && scopes.includes('openid')) {
    out.id_token = await tokens.signIdToken({ sub: user.id, clientId: g.clientId, nonce: g.nonce, claims: userClaims(user, tier, scopes) });
  }
  return out;
}

/** POST /oauth/token: `body` is the parsed form; `basicClientId` the user of a Basic header. */
export async function tokenGrant(ctx: AppContext, body: Record<string, unknown>, basicClientId?: string): Promise<TokenResponse> {
  const grantType = param(body, 'grant_type', true);
  if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
    throw new OAuthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
  }
  const clientId = param(body, 'client_id', false) ?? basicClientId;
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required (public clients authenticate with none)');
  if (!(await getClient(ctx.db, clientId))) throw new OAuthError('invalid_client', 'unknown client_id');

  if (grantType === 'authorization_code') {
    const code = param(body, 'code', true);
    const redirectUri = param(body, 'redirect_uri', true);
    const codeVerifier = param(body, 'code_verifier', true);
    if (!VERIFIER_RE.test(codeVerifier)) throw new OAuthError('invalid_request', 'code_verifier must be 43-128 characters of [A-Za-z0-9._~-]');
    const r = await ctx.db.tx(async (q) => {
      const red = await redeemCode(q, { code, clientId, redirectUri, codeVerifier });
      if (!red.ok) return red;
      const familyId = familyOfCode(sha256Hex(code));
      const refreshToken = await issueRefreshToken(q, { familyId, clientId, userId: red.row.user_id, scope: red.row.scope });
      return { ...red, refreshToken };
    });
    if (!r.ok) throw new OAuthError('invalid_grant', CODE_FAILURES[r.reason]);
    return issue(ctx, { userId: r.row.user_id, clientId, scope: r.row.scope, refreshToken: r.refreshToken, nonce: r.row.nonce, withIdToken: true });
  }

  const token = param(body, 'refresh_token', true);
  const scope = param(body, 'scope', false);
  const r = await ctx.db.tx((q) => rotateRefreshToken(q, { token, clientId, scope }));
  if (!r.ok) throw new OAuthError(r.reason === 'scope' ? 'invalid_scope' : 'invalid_grant', REFRESH_FAILURES[r.reason]);
  // no ID token on refresh (OIDC Core §12.2 makes it optional): the access token is what changes
  return issue(ctx, { userId: r.row.user_id, clientId, scope: r.scope, refreshToken: r.refreshToken, withIdToken: false });
}
