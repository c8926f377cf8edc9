import type { Db } from '../store/db.js';
import { verifyApiKeyWithTier } from '../store/keys.js';

export interface KeyPrincipal {
  keyId: string;
  userId: string;
  tier: string;
  /** the store version the key was checked at (see `verifyKeyCached`) */
  storeVersion?: number;
}

/** Entries kept at most per store (the map is emptied when full; a miss is one query). */
const MAX_ENTRIES = 10_000;

interface Entry {
  p: KeyPrincipal;
  version: number;
}

const caches = new WeakMap<Db, Map<string, Entry>>();

/**
 * `verifyApiKeyWithTier` with an in-memory copy of valid keys for a store that can say
 * when it may have changed (SQLite: `SqliteDb.version()`, which follows this daemon's own
 * writes and, through SQLite's data_version, every other process's): a revoked key, a
 * new tier or an organization switched off is seen at the next request, as without the
 * copy. Unknown or revoked keys are never kept (random keys cannot fill the memory), and
 * a hit is the full key string, so a key matching by lookup id only never hits. The
 * principal carries the version it was checked at (`storeVersion`), which the gateway's
 * admission reuses: one version read per call. Without
 * `version` (PostgreSQL: other daemons write too) every call asks the store.
 */
export async function verifyKeyCached(db: Db, presented: string): Promise<KeyPrincipal | undefined> {
  const version = db.version?.();
  if (version === undefined) return verifyApiKeyWithTier(db.hot ?? db, presented);
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new Map()));
  const hit = cache.get(presented);
  if (hit && hit.version === version) return hit.p;
  const found = await verifyApiKeyWithTier(db.hot ?? db, presented);
  if (!found) {
    cache.delete(presented);
    return undefined;
  }
  // stamped with the version read before the query: a change during it makes the next call ask again
  const p = { ...found, storeVersion: version };
  if (cache.size >= MAX_ENTRIES) cache.clear();
  cache.set(presented, { p, version });
  return p;
}
