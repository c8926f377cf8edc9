import { createLocalJWKSet, decodeProtectedHeader, importJWK, jwtVerify, SignJWT, type JWK, type JWTVerifyGetKey } from 'jose';
import { newId } from '../../shared/ids.js';
import type { Db } from '../store/db.js';
import { currentKeyRow, ensureSigningKey, publicJwks, SIGNING_ALG } from './keys.js';

/** Access and ID tokens live 15 minutes: `exp - iat = 900`. */
export const ACCESS_TOKEN_TTL_S = 900;
export const ID_TOKEN_TTL_S = 900;
/** RFC 9068 header type; an ID token (typ JWT) is never accepted as an access token. */
export const ACCESS_TOKEN_TYP = 'at+jwt';
const CLOCK_TOLERANCE_S = 5;

export interface AccessClaims {
  sub: string;
  scope: string;
  client_id: string;
  tier: string;
  iat: number;
  exp: number;
  jti: string;
}

export interface TokenService {
  /** The issuer: the root URL without a trailing slash. */
  issuer(): string;
  /** The `aud` of every access token: the API base `{root_url}/api`. */
  apiAudience(): string;
  signAccessToken(c: { sub: string; clientId: string; scope: string; tier: string }): Promise<string>;
  signIdToken(c: { sub: string; clientId: string; nonce?: string | null; claims: Record<string, unknown> }): Promise<string>;
  /** The claims of a valid access token (signature, typ, exp, iss, aud), else null. */
  verifyAccessToken(token: string): Promise<AccessClaims | null>;
}

export function createTokenService(db: Db, rootUrl: () => string): TokenService {
  let signer: { kid: string; key: CryptoKey } | undefined;
  let verifier: { kids: Set<string>; getKey: JWTVerifyGetKey } | undefined;
  const issuer = () => rootUrl().replace(/\/+$/, '');
  const apiAudience = () => `${issuer()}/api`;

  /** The current key, re-read from the store so a rotation by `agw admin` applies at once. */
  async function signingKey(): Promise<{ kid: string; key: CryptoKey }> {
    let row = await currentKeyRow(db);
    if (!row) {
      await ensureSigningKey(db);
      row = await currentKeyRow(db);
      if (!row) throw new Error('no OAuth signing key');
    }
    if (signer?.kid !== row.kid) {
      const key = (await importJWK(JSON.parse(row.private_jwk) as JWK, SIGNING_ALG)) as CryptoKey;
      signer = { kid: row.kid, key };
      if (verifier && !verifier.kids.has(row.kid)) verifier = undefined; // rotated elsewhere: reload
    }
    return signer;
  }

  async function loadVerifier(): Promise<NonNullable<typeof verifier>> {
    const keys = await publicJwks(db);
    verifier = { kids: new Set(keys.map((k) => String(k.kid))), getKey: createLocalJWKSet({ keys }) };
    return verifier;
  }

  async function sign(payload: Record<string, unknown>, typ: string, aud: string, sub: string, ttl: number): Promise<string> {
    const { kid, key } = await signingKey();
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT(payload)
      .setProtectedHeader({ alg: SIGNING_ALG, kid, typ })
      .setIssuer(issuer())
      .setAudience(aud)
      .setSubject(sub)
      .setIssuedAt(now)
      .setExpirationTime(now + ttl)
      .sign(key);
  }

  return {
    issuer,
    apiAudience,
    signAccessToken: (c) =>
      sign({ scope: c.scope, tier: c.tier, client_id: c.clientId, jti: newId('at', 12) }, ACCESS_TOKEN_TYP, apiAudience(), c.sub, ACCESS_TOKEN_TTL_S),
    signIdToken: (c) =>
      sign({ ...c.claims, ...(c.nonce ? { nonce: c.nonce } : {}) }, 'JWT', c.clientId, c.sub, ID_TOKEN_TTL_S),
    async verifyAccessToken(token) {
      let kid: string | undefined;
      try {
        kid = decodeProtectedHeader(token).kid;
      } catch {
        return null;
      }
      if (!kid) return null;
      let v = verifier ?? (await loadVerifier());
      if (!v.kids.has(kid)) {
        // rotated by `agw admin` or another daemon: reload only when the store has that kid
        if (!(await db.get('SELECT kid FROM oauth_keys WHERE kid = ?', [kid]))) return null;
        v = await loadVerifier();
        if (!v.kids.has(kid)) return null;
      }
      try {
        const { payload } = await jwtVerify(token, v.getKey, {
          algorithms: [SIGNING_ALG],
          typ: ACCESS_TOKEN_TYP,
          issuer: issuer(),
          audience: apiAudience(),
          clockTolerance: CLOCK_TOLERANCE_S,
          maxTokenAge: ACCESS_TOKEN_TTL_S + CLOCK_TOLERANCE_S,
          requiredClaims: ['sub', 'exp', 'iat', 'scope', 'client_id'],
        });
        const { sub, scope, client_id, tier, iat, exp, jti } = payload as Partial<AccessClaims>;
        if (typeof sub !== 'string' || typeof scope !== 'string' || typeof client_id !== 'string') return null;
        if (Number(exp) - Number(iat) > ACCESS_TOKEN_TTL_S) return null; // we never sign longer-lived ones
        return { sub, scope, client_id, tier: String(tier ?? ''), iat: Number(iat), exp: Number(exp), jti: String(jti ?? '') };
      } catch {
        return null;
      }
    },
  };
}
