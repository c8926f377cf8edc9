import { gaxios, JWT } from 'google-auth-library';
import type { ServiceAccount } from '../../../shared/config/provider-keys.js';

/**
 * OAuth access tokens for a Google service account (vertex), with google-auth-library's
 * JWT client: a JWT assertion signed with the account's private key (RS256) is exchanged
 * at the token endpoint (the JWT bearer grant, RFC 7523); the token is cached and
 * fetched again `REFRESH_BEFORE_EXPIRY_MS` before it expires. The library always posts to
 * Google's token URL; a key file whose `token_uri` names another endpoint (a private
 * universe, a test) is honoured by sending the exchange there.
 */
export const VERTEX_TOKEN_POLICY = {
  scopes: ['https://www.googleapis.com/auth/cloud-platform'],
  /** a token this close to its expiry is replaced before use */
  refreshBeforeExpiryMs: 60_000,
  /** a token endpoint that does not answer within this fails the call (503), never hangs it */
  timeoutMs: 10_000,
};

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

const clients = new WeakMap<ServiceAccount, JWT>();

function clientFor(sa: ServiceAccount): JWT {
  let c = clients.get(sa);
  if (!c) {
    const transporter = new gaxios.Gaxios({ timeout: VERTEX_TOKEN_POLICY.timeoutMs });
    const tokenUri = sa.token_uri;
    if (tokenUri && tokenUri !== GOOGLE_TOKEN_URL) {
      transporter.interceptors.request.add({
        resolved: async (opts) => {
          if (String(opts.url) === GOOGLE_TOKEN_URL) opts.url = new URL(tokenUri);
          return opts;
        },
      });
    }
    c = new JWT({
      email: sa.client_email,
      key: sa.private_key,
      keyId: sa.private_key_id,
      scopes: VERTEX_TOKEN_POLICY.scopes,
      eagerRefreshThresholdMillis: VERTEX_TOKEN_POLICY.refreshBeforeExpiryMs,
      transporter,
    });
    clients.set(sa, c);
  }
  return c;
}

/** The account's current access token (fetched or refreshed when needed). */
export async function vertexAccessToken(sa: ServiceAccount): Promise<string> {
  const { token } = await clientFor(sa).getAccessToken();
  if (!token) throw new Error('the token endpoint answered no access_token');
  return token;
}
