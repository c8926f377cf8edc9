import type { ApiKeyRow } from '../store/keys.js';

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString());

/** The public start of a key (its lookup part), never the secret. */
export const keyPrefix = (lookup: string) => `agw_${lookup}_…`;

/**
 * The contract's Key record as far as keys have its fields today: `{id, name, prefix,
 * createdAt, lastUsedAt, revoked}` (`lastUsedAt`: the minute of the last use, see
 * auth/key-usage.ts). The one place a key becomes a record: `agw admin key list`, and
 * the key endpoints to come (`expiresAt`, `limits` and `spent` are added here).
 */
export function keyView(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    prefix: keyPrefix(k.lookup),
    createdAt: iso(k.created_at)!,
    lastUsedAt: iso(k.last_used_at),
    revoked: k.revoked_at !== null && k.revoked_at !== undefined,
  };
}
