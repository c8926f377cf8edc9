import { newSecret } from '../../shared/ids.js';
import type { Queryable } from '../store/db.js';
import { sha256Hex } from './codes.js';

/**
 * Refresh tokens: opaque, stored as SHA-256, 30 days from issue. Each use rotates: the
 * presented token is spent and a new one of the same family is returned. Presenting a
 * spent token again means it leaked, so the whole family is revoked (RFC 9700 §4.14.2).
 */
export const REFRESH_TTL_MS = 30 * 24 * 3600_000;

export interface RefreshRow {
  token_hash: string;
  family_id: string;
  client_id: string;
  user_id: string;
  scope: string;
  expires_at: number;
  used_at: number | null;
  revoked_at: number | null;
  created_at: number;
}

export async function issueRefreshToken(
  q: Queryable,
  r: { familyId: string; clientId: string; userId: string; scope: string },
): Promise<string> {
  const token = `agwr_${newSecret(32)}`;
  const now = Date.now();
  await q.run(
    `INSERT INTO oauth_refresh_tokens (token_hash, family_id, client_id, user_id, scope, expires_at, used_at, revoked_at, created_at)
     VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, ?)`,
    [sha256Hex(token), r.familyId, r.clientId, r.userId, r.scope, now + REFRESH_TTL_MS, now],
  );
  return token;
}

async function revokeFamily(q: Queryable, familyId: string, now: number): Promise<void> {
  await q.run('UPDATE oauth_refresh_tokens SET revoked_at = ? WHERE family_id = ? AND revoked_at IS NULL', [now, familyId]);
}

export type Rotated =
  | { ok: true; row: RefreshRow; scope: string; refreshToken: string }
  | { ok: false; reason: 'unknown' | 'reused' | 'revoked' | 'expired' | 'client' | 'scope' };

/**
 * Spends a refresh token and issues its successor, inside a transaction. `scope`, when
 * given, may only narrow the scope of the access token issued now. Failed checks change nothing, except a
 * replay, which revokes the family (so the caller must commit, not throw).
 */
export async function rotateRefreshToken(
  q: Queryable,
  r: { token: string; clientId: string; scope?: string },
): Promise<Rotated> {
  const row = await q.get<RefreshRow>('SELECT * FROM oauth_refresh_tokens WHERE token_hash = ?', [sha256Hex(r.token)]);
  if (!row) return { ok: false, reason: 'unknown' };
  const now = Date.now();
  if (row.revoked_at !== null && row.revoked_at !== undefined) return { ok: false, reason: 'revoked' };
  if (row.client_id !== r.clientId) return { ok: false, reason: 'client' };
  if (row.used_at !== null && row.used_at !== undefined) {
    await revokeFamily(q, row.family_id, now);
    return { ok: false, reason: 'reused' };
  }
  if (Number(row.expires_at) <= now) return { ok: false, reason: 'expired' };
  let scope = row.scope;
  if (r.scope !== undefined) {
    const granted = new Set(row.scope.split(' '));
    const asked = r.scope.split(' ').filter(Boolean);
    if (asked.length === 0 || asked.some((s) => !granted.has(s))) return { ok: false, reason: 'scope' };
    scope = asked.join(' ');
  }
  const spent = await q.run(
    'UPDATE oauth_refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND revoked_at IS NULL',
    [now, row.token_hash],
  );
  if (spent.changes !== 1) {
    await revokeFamily(q, row.family_id, now);
    return { ok: false, reason: 'reused' };
  }
  await q.run('DELETE FROM oauth_refresh_tokens WHERE family_id = ? AND expires_at < ?', [row.family_id, now]);
  // RFC 6749 §6: the new refresh token keeps the family's scope; only this access token narrows
  const refreshToken = await issueRefreshToken(q, { familyId: row.family_id, clientId: row.client_id, userId: row.user_id, scope: row.scope });
  return { ok: true, row, scope, refreshToken };
}
