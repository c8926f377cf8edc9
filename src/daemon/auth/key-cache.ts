import { AgwError } from '../../shared/errors.js';
import type { Db } from '../store/db.js';
import { verifyApiKeyWithTier } from '../store/keys.js';
import { noteKeyUse } from './key-usage.js';
import type { KeyPrincipal } from '../context/principal.js';

export type { KeyPrincipal } from '../context/principal.js';


/** 401 KEY_EXPIRED when the key has expired (at `now`), else null. */
function expiredKeyError(p: Pick<KeyPrincipal, 'expiresAt'>, now = Date.now()): AgwError | null {
  if (p.expiresAt === null || now < p.expiresAt) return null;
  const at = new Date(p.expiresAt).toISOString();
  return new AgwError('KEY_EXPIRED', `this agw_ key expired at ${at}: ask its owner for a new key (or make one: agw keys create)`, { expiredAt: at });
}

/** Entries kept at most per store (the map is emptied when full; a miss is one query). */
const MAX_ENTRIES = 10_000;

interface Entry {
  p: KeyPrincipal;
  version: number;
}

const caches = new WeakMap<Db, Map<string, Entry>>();

/**
 * The in-memory copy of a valid key, if it is still valid: synchronous, so the gateway's
 * authentication costs no promise on a hit (see `verifyKeyCached`). The principal is
 * shared by every request that presents the key at this store version: read-only.
 */
export function cachedKey(db: Db, presented: string): KeyPrincipal | undefined {
  const version = db.version?.();
  if (version === undefined) return undefined;
  const hit = caches.get(db)?.get(presented);
  if (!hit || hit.version !== version) return undefined;
  return hit.p;
}

/**
 * `verifyApiKeyWithTier` with an in-memory copy of valid keys for a store that can say
 * when it may have changed (SQLite: `SqliteDb.version()`, which follows this daemon's own
 * writes and every other process's commits): a revoked key, a new tier or an organization
 * switched off is seen at the next request, as without the copy. Unknown or revoked keys
 * are never kept (random keys cannot fill the memory), and a hit is the full key string,
 * so a key matching by lookup id only never hits. The principal carries the version it
 * was checked at (`storeVersion`), which the gateway's admission reuses: one version read
 * per call. Without `version` (PostgreSQL: other daemons write too) every call asks the
 * store.
 */
export async function verifyKeyCached(db: Db, presented: string): Promise<KeyPrincipal | undefined> {
  const hit = cachedKey(db, presented);
  if (hit) return hit;
  const version = db.version?.();
  const row = await verifyApiKeyWithTier(db.hot ?? db, presented);
  if (!row) {
    caches.get(db)?.delete(presented);
    return undefined;
  }
  // stamped with the version read before the query: a change during it makes the next call ask again
  const p: KeyPrincipal = Object.freeze({ kind: 'key' as const, ...row, storeVersion: version });
  if (version === undefined) return p;
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(presented, { p, version });
  return p;
}

/**
 * A presented key as a request may use it: its principal (its use noted for `lastUsedAt`),
 * undefined when unknown or revoked, 401 KEY_EXPIRED thrown when it expired (not noted).
 * `usableCachedKey` answers from memory only (undefined: ask `usableKey`).
 */
export function usableCachedKey(db: Db, presented: string): KeyPrincipal | undefined {
  const hit = cachedKey(db, presented);
  return hit && usable(db, hit);
}

export async function usableKey(db: Db, presented: string): Promise<KeyPrincipal | undefined> {
  const p = await verifyKeyCached(db, presented);
  return p && usable(db, p);
}

function usable(db: Db, p: KeyPrincipal): KeyPrincipal {
  if (p.expiresAt !== null) {
    const expired = expiredKeyError(p);
    if (expired) throw expired;
  }
  noteKeyUse(db, p.keyId);
  return p;
}
