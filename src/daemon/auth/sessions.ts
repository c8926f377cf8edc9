import { createHash } from 'node:crypto';
import type { AppContext } from '../context/index.js';
import type { Principal } from './principal.js';
import { effectiveTier } from '../store/users.js';
import { newSecret } from '../../shared/ids.js';

/**
 * Portal sessions: an opaque random id in the `service_session` cookie, stored as its
 * SHA-256. Sessions last 7 days from the last use (sliding), renewed at most once a minute.
 */
export const SESSION_COOKIE = 'service_session';
export const SESSION_TTL_MS = 7 * 24 * 3600_000;
const RENEW_AFTER_MS = 60_000;

function hashId(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

export async function createSession(ctx: AppContext, userId: string): Promise<{ id: string; csrfToken: string; expiresAt: number }> {
  const id = newSecret(32);
  const csrfToken = newSecret(24);
  const now = Date.now();
  const expiresAt = now + SESSION_TTL_MS;
  await ctx.db.run(
    'INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, expires_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?)',
    [hashId(id), userId, csrfToken, now, expiresAt, now],
  );
  return { id, csrfToken, expiresAt };
}

export async function lookupSession(ctx: AppContext, id: string): Promise<Principal | null> {
  const h = hashId(id);
  const row = await ctx.db.get<{ user_id: string; csrf_token: string; expires_at: number; last_seen_at: number }>(
    'SELECT user_id, csrf_token, expires_at, last_seen_at FROM sessions WHERE id_hash = ?',
    [h],
  );
  const now = Date.now();
  if (!row || Number(row.expires_at) <= now) return null;
  if (now - Number(row.last_seen_at) > RENEW_AFTER_MS) {
    await ctx.db.run('UPDATE sessions SET last_seen_at = ?, expires_at = ? WHERE id_hash = ?', [now, now + SESSION_TTL_MS, h]);
  }
  const tier = await effectiveTier(ctx.db, row.user_id);
  if (!tier) return null;
  return { kind: 'session', userId: row.user_id, tier, sessionId: h, csrfToken: row.csrf_token };
}

export async function deleteSession(ctx: AppContext, id: string): Promise<void> {
  await ctx.db.run('DELETE FROM sessions WHERE id_hash = ?', [hashId(id)]);
}
