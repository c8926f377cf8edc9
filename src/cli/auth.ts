/**
 * Which credentials a command sends: `AGW_API_KEY` beats stored credentials; a stored
 * OAuth access token that has expired is refreshed silently (and stored again).
 */
import { CliError } from './errors.js';
import { loadCredentials, saveCredentials, type Credentials, type CredentialStore, type OAuthTokens, type PortalSession } from './credentials.js';
import { resolveTarget, type Target } from './profiles.js';

export interface GlobalOpts {
  profile?: string;
  baseUrl?: string;
  json?: boolean;
}

export interface Bearer {
  token: string;
  kind: 'key' | 'oauth';
  source: 'env' | CredentialStore;
}

export interface AuthState {
  target: Target;
  bearer?: Bearer;
  session?: PortalSession;
  store: CredentialStore | null;
}

/** The browser login (PKCE, loopback redirect): loaded only by `agw login` and token refresh. */
export const loadOAuthModule = () => import('./oauth-login.js');

/** Seconds or milliseconds since the epoch, to milliseconds. */
export const toEpochMs = (t: number): number => (t < 1e12 ? t * 1000 : t);

async function refreshIfExpired(target: Target, creds: Credentials): Promise<void> {
  const o = creds.oauth;
  if (!o || toEpochMs(o.expiresAt) - 30_000 > Date.now()) return;
  if (!o.refreshToken) {
    throw new CliError('your login has expired', 'log in again: agw login', 'LOGIN_EXPIRED');
  }
  let fresh: OAuthTokens;
  try {
    fresh = await (await loadOAuthModule()).refreshTokens(target.baseUrl, o.refreshToken);
  } catch (e) {
    if (e instanceof CliError && e.code === 'NETWORK_ERROR') throw e;
    throw new CliError(`could not refresh your login: ${(e as Error).message}`, 'log in again: agw login', 'LOGIN_EXPIRED');
  }
  creds.oauth = { ...fresh, refreshToken: fresh.refreshToken ?? o.refreshToken, expiresAt: toEpochMs(fresh.expiresAt) };
  await saveCredentials(target.profile, creds);
}

export async function resolveAuth(opts: GlobalOpts): Promise<AuthState> {
  const target = resolveTarget(opts);
  const { creds, store } = await loadCredentials(target.profile);
  const session = creds.session && (!creds.session.expiresAt || creds.session.expiresAt > Date.now()) ? creds.session : undefined;
  const envKey = process.env.AGW_API_KEY?.trim();
  if (envKey) return { target, bearer: { token: envKey, kind: 'key', source: 'env' }, session, store };
  if (creds.apiKey) return { target, bearer: { token: creds.apiKey, kind: 'key', source: store! }, session, store };
  if (creds.oauth) {
    await refreshIfExpired(target, creds);
    return { target, bearer: { token: creds.oauth!.accessToken, kind: 'oauth', source: store! }, session, store };
  }
  return { target, session, store };
}
