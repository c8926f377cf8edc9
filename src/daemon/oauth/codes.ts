import { createHash, timingSafeEqual } from 'node:crypto';
import { newSecret } from '../../shared/ids.js';
import type { Queryable } from '../store/db.js';

/**
 * Authorization codes: random, stored as SHA-256, single use, 60 s, bound to the client,
 * the redirect URI and the PKCE S256 challenge. A used code is kept for an hour so that a
 * replay is recognised (and the refresh-token family issued from it revoked).
 */
export const CODE_TTL_MS = 60_000;
const KEEP_USED_MS = 3600_000;

export interface CodeRow {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  scope: string;
  nonce: string | null;
  expires_at: number;
  used_at: number | null;
}

export const sha256Hex = (s: string): string => createHash('sha256').update(s).digest('hex');

/** The refresh-token family a code starts; derived, so a code replay can revoke it. */
export const familyOfCode = (codeHash: string): string => `fam_${codeHash.slice(0, 32)}`;

export async function issueCode(
  q: Queryable,
  c: { clientId: string; userId: string; redirectUri: string; codeChallenge: string; scope: string; nonce?: string | null },
): Promise<string> {
  const code = newSecret(32);
  const now = Date.now();
  await q.run('DELETE FROM oauth_codes WHERE expires_at < ?', [now - KEEP_USED_MS]);
  await q.run(
    `INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scope, nonce, expires_at, used_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    [sha256Hex(code), c.clientId, c.userId, c.redirectUri, c.codeChallenge, c.scope, c.nonce ?? null, now + CODE_TTL_MS],
  );
  return code;
}

/** RFC 7636 S256: BASE64URL(SHA256(ASCII(code_verifier))) compared in constant time. */
export function pkceMatches(verifier: string, challenge: string): boolean {
  const got = Buffer.from(createHash('sha256').update(verifier, 'ascii').digest('base64url'));
  const want = Buffer.from(challenge);
  return got.length === want.length && timingSafeEqual(got, want);
}

export type Redeemed =
  | { ok: true; row: CodeRow }
  | { ok: false; reason: 'unknown' | 'reused' | 'expired' | 'client' | 'redirect_uri' | 'verifier' };

/**
 * Redeems a code inside a transaction. Every check runs before the code is spent, so a
 * failed attempt changes nothing; the spend is a conditional UPDATE, so of two concurrent
 * redemptions exactly one wins. A replay of a spent code revokes the tokens it produced.
 */
export async function redeemCode(
  q: Queryable,
  r: { code: string; clientId: string; redirectUri: string; codeVerifier: string },
): Promise<Redeemed> {
  const hash = sha256Hex(r.code);
  const row = await q.get<CodeRow>('SELECT * FROM oauth_codes WHERE code_hash = ?', [hash]);
  if (!row) return { ok: false, reason: 'unknown' };
  const now = Date.now();
  const replay = async (): Promise<Redeemed> => {
    await q.run('UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL', [now, familyOfCode(hash)]);
    return { ok: false, reason: 'reused' };
  };
  if (row.used_at !== null && row.used_at !== undefined) return replay();
  if (Number(row.expires_at) <= now) return { ok: false, reason: 'expired' };
  if (row.client_id !== r.clientId) return { ok: false, reason: 'client' };
  if (row.redirect_uri !== r.redirectUri) return { ok: false, reason: 'redirect_uri' };
  if (!pkceMatches(r.codeVerifier, row.code_challenge)) return { ok: false, reason: 'verifier' };
  const spent = await q.run('UPDATE oauth_codes SET used_at = ? WHERE code_hash = ? AND used_at IS NULL', [now, hash]);
  if (spent.changes !== 1) return replay();
  return { ok: true, row };
}
