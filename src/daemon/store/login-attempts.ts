import { createHash } from 'node:crypto';
import type { Queryable } from './db.js';
import { newId } from '../../shared/ids.js';

/**
 * The portal's login throttle. Every attempt first books one row per scope (the account
 * and the client address) inside one transaction, after checking that no scope has
 * reached its limit within the window, so concurrent attempts cannot slip past it. A
 * successful login deletes its own rows and the account's earlier failures; failures
 * stay until they age out of the window. Scope keys are stored hashed (people type
 * passwords into email fields).
 */
export interface ThrottleRule {
  limit: number;
  windowMs: number;
}

export const LOGIN_THROTTLE = {
  account: { limit: 5, windowMs: 15 * 60_000 },
  address: { limit: 20, windowMs: 15 * 60_000 },
} satisfies Record<string, ThrottleRule>;

export interface Scope {
  key: string;
  rule: ThrottleRule;
}

export function scopeKey(kind: 'account' | 'address', value: string): string {
  return `${kind}:${createHash('sha256').update(value.trim().toLowerCase()).digest('hex')}`;
}

export type AttemptTicket = { ok: true; ids: string[] } | { ok: false; retryAfterSec: number };

/** Books an attempt against every scope, or says how long to wait (must run inside `db.tx`). */
export async function beginAttempt(q: Queryable, scopes: Scope[], now = Date.now()): Promise<AttemptTicket> {
  // Serialise attempts on one scope on every engine: the upsert holds the scope's lock
  // row until the transaction ends (SQLite's single writer already does), so the count
  // below sees every attempt committed before it. Always in the same scope order.
  for (const s of scopes) {
    await q.run(
      'INSERT INTO login_attempts (id, scope_key, created_at) VALUES (?, ?, 0) ON CONFLICT (id) DO UPDATE SET created_at = 0',
      [`lock:${s.key}`, `lock:${s.key}`],
    );
  }
  let waitMs = 0;
  for (const s of scopes) {
    const row = await q.get<{ n: number; first: number | null }>(
      'SELECT COUNT(*) AS n, MIN(created_at) AS first FROM login_attempts WHERE scope_key = ? AND created_at > ?',
      [s.key, now - s.rule.windowMs],
    );
    if (row && Number(row.n) >= s.rule.limit) waitMs = Math.max(waitMs, Number(row.first) + s.rule.windowMs - now);
  }
  if (waitMs > 0) return { ok: false, retryAfterSec: Math.max(1, Math.ceil(waitMs / 1000)) };
  const ids: string[] = [];
  for (const s of scopes) {
    const id = newId('la');
    await q.run('INSERT INTO login_attempts (id, scope_key, created_at) VALUES (?, ?, ?)', [id, s.key, now]);
    ids.push(id);
  }
  return { ok: true, ids };
}

/** After a successful login: forget this attempt and the account's earlier failures. */
export async function forgetAttempt(q: Queryable, ids: string[], accountKey: string): Promise<void> {
  for (const id of ids) await q.run('DELETE FROM login_attempts WHERE id = ?', [id]);
  await q.run('DELETE FROM login_attempts WHERE scope_key = ?', [accountKey]);
}

/** Deletes attempts older than the longest window (run now and then). */
export async function pruneAttempts(q: Queryable, now = Date.now()): Promise<void> {
  const oldest = Math.max(...Object.values(LOGIN_THROTTLE).map((r) => r.windowMs));
  await q.run('DELETE FROM login_attempts WHERE created_at < ?', [now - oldest]);
}
