import { createHash, timingSafeEqual } from 'node:crypto';
import type { Queryable } from './db.js';
import { newId, newSecret } from '../../shared/ids.js';

/**
 * API keys look like `agw_<lookup:12 hex>_<secret>`. Only the lookup part and the
 * SHA-256 of the whole key are stored; a presented key is found by its lookup part and
 * then compared by hash in constant time.
 */
export const KEY_PREFIX = 'agw_';
const KEY_RE = /^agw_([0-9a-f]{12})_([A-Za-z0-9_-]{32,64})$/;

export interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string | null;
  lookup: string;
  hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export async function createApiKey(
  q: Queryable,
  userId: string,
  name?: string | null,
): Promise<{ id: string; key: string; lookup: string }> {
  const lookup = randomHex12();
  const key = `${KEY_PREFIX}${lookup}_${newSecret(32)}`;
  const id = newId('key');
  await q.run('INSERT INTO api_keys (id, user_id, name, lookup, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
    id,
    userId,
    name ?? null,
    lookup,
    hashKey(key),
    Date.now(),
  ]);
  return { id, key, lookup };
}

function randomHex12(): string {
  return newId('x', 6).slice(2);
}

/** The live (not revoked) key row matching a presented key, or undefined. */
export async function verifyApiKey(q: Queryable, presented: string): Promise<ApiKeyRow | undefined> {
  const m = KEY_RE.exec(presented);
  if (!m) return undefined;
  const row = await q.get<ApiKeyRow>('SELECT * FROM api_keys WHERE lookup = ?', [m[1]]);
  if (!row || row.revoked_at !== null) return undefined;
  const a = Buffer.from(hashKey(presented), 'hex');
  const b = Buffer.from(row.hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b) ? row : undefined;
}

export async function revokeApiKey(q: Queryable, id: string): Promise<boolean> {
  const r = await q.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [Date.now(), id]);
  if (r.changes > 0) return true;
  return (await q.get('SELECT id FROM api_keys WHERE id = ?', [id])) !== undefined;
}

export function listApiKeys(q: Queryable, userId: string): Promise<ApiKeyRow[]> {
  return q.all<ApiKeyRow>('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at DESC', [userId]);
}

/**
 * One query for the gateway's hot path: the live key, its user and the effective tier
 * (an active organization's tier wins, the first joined one when there are several).
 */
export async function verifyApiKeyWithTier(
  q: Queryable,
  presented: string,
): Promise<{ keyId: string; userId: string; tier: string } | undefined> {
  const m = KEY_RE.exec(presented);
  if (!m) return undefined;
  const row = await q.get<{ id: string; user_id: string; hash: string; revoked_at: number | null; tier: string; org_tier: string | null }>(
    `SELECT k.id, k.user_id, k.hash, k.revoked_at, u.tier,
            (SELECT o.tier FROM org_members om JOIN organizations o ON o.id = om.org_id
              WHERE om.user_id = k.user_id AND o.active = 1 ORDER BY om.created_at LIMIT 1) AS org_tier
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.lookup = ?`,
    [m[1]],
  );
  if (!row || row.revoked_at !== null) return undefined;
  const a = Buffer.from(hashKey(presented), 'hex');
  const b = Buffer.from(row.hash, 'hex');
  if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
  return { keyId: row.id, userId: row.user_id, tier: row.org_tier ?? row.tier };
}
