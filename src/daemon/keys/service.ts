import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { AgwError } from '../../shared/errors.js';
import type { KeyLimitsInputT, KeyT } from '../../shared/schemas/keys.js';
import type { Db, Queryable } from '../store/db.js';
import { boundsOfRow, childKeys, createApiKey, descendantIds, keyRow, listApiKeys, revokeApiKey, setKeyBounds, setKeyName, type ApiKeyRow } from '../store/keys.js';
import { clampTo, isBounded, tooWide, UNBOUNDED, type BoundField, type KeyBounds } from './bounds.js';
import { applyLimits } from './input.js';
import { keySpent, keysSpent, keyView } from './view.js';

/**
 * Managing keys, for the HTTP API (routes/keys.ts, the portal) and the admin commands.
 *
 * Who may manage what: the account (its session, an OAuth token, or a key without limits
 * or expiry) manages every key of the account; a limited key (limits or an expiry)
 * manages only itself and the keys made with it, and keys it makes are bound to it.
 * Operators (`agw admin key …`, `caller` absent) manage any key.
 *
 * The rule that holds whoever acts: a key made with a limited key stays within that
 * key's limits and expiry (403 KEY_LIMITS_TOO_WIDE otherwise), and a limited key cannot
 * give any key more than it has itself (itself included). Narrowing a key narrows the
 * keys made with it; revoking one revokes them (same transaction).
 */
export interface KeyCaller {
  userId: string;
  /** the agw_ key the request was made with, if any */
  keyId?: string | null;
}

export interface KeyChange {
  name?: string | null;
  limits?: KeyLimitsInputT;
  /** top-level `expiresAt` of a request body: the same as `limits.expiresAt` */
  expiresAt?: string | null;
}

/** The calling key's current bounds when it is limited (read in the transaction), else null. */
async function limitedCaller(q: Queryable, caller: KeyCaller | undefined, lock = true): Promise<(KeyBounds & { id: string }) | null> {
  if (!caller?.keyId) return null;
  // locked: a concurrent change of this key's limits waits, so what it makes fits its limits as they are
  const row = await keyRow(q, caller.keyId, lock);
  if (!row || row.revoked_at !== null) throw new AgwError('UNAUTHORIZED', 'invalid or revoked credentials');
  const b = boundsOfRow(row);
  return isBounded(b) ? { ...b, id: row.id } : null;
}

function mergeExpiry(change: KeyChange): KeyLimitsInputT | undefined {
  if (change.expiresAt === undefined) return change.limits;
  const inner = change.limits?.expiresAt;
  if (inner !== undefined && inner !== change.expiresAt) {
    throw new AgwError('INVALID_REQUEST', 'expiresAt and limits.expiresAt differ: send one of them', { field: 'expiresAt', location: 'body' });
  }
  return { ...change.limits, expiresAt: change.expiresAt };
}

const WHAT: Record<BoundField, string> = {
  budget: 'budget',
  budgetPeriod: 'budget period (a shorter period resets more often)',
  rpm: 'rpm',
  tpm: 'tpm',
  models: 'model allowlist',
  expiresAt: 'expiry',
};

function tooWideError(field: BoundField, whose: string): AgwError {
  return new AgwError('KEY_LIMITS_TOO_WIDE', `the ${WHAT[field]} would exceed ${whose}: a key made with a key never gets more than that key has`, {
    field: field === 'expiresAt' ? 'limits.expiresAt' : `limits.${field}`,
  });
}

/** 403 unless `b` fits inside the key's maker and inside a limited caller. */
async function checkFits(q: Queryable, config: ResolvedConfig, b: KeyBounds, parentId: string | null, caller: KeyBounds | null): Promise<void> {
  if (caller) {
    const f = tooWide(config, b, caller);
    if (f) throw tooWideError(f, 'the limits of the key making this request');
  }
  const parent = parentId ? await keyRow(q, parentId, true) : undefined;
  if (parent) {
    const f = tooWide(config, b, boundsOfRow(parent));
    if (f) throw tooWideError(f, `the limits of ${parent.id}, the key it was made with`);
  }
}

async function viewOf(q: Queryable, row: ApiKeyRow): Promise<KeyT> {
  return keyView(row, await keySpent(q, row.user_id, row.id, boundsOfRow(row).limits));
}

/** A new key of `userId` with limits; `key` is the secret, shown once. */
export async function createKey(db: Db, config: ResolvedConfig, userId: string, change: KeyChange, caller?: KeyCaller): Promise<KeyT & { key: string }> {
  return db.tx(async (q) => {
    const maker = await limitedCaller(q, caller);
    // a key made with a limited key starts from that key's limits: what is left out is inherited
    const bounds = applyLimits(maker ?? UNBOUNDED, mergeExpiry(change));
    await checkFits(q, config, bounds, null, maker);
    const name = change.name?.trim() || null;
    const k = await createApiKey(q, userId, name, { bounds, parentKeyId: maker?.id ?? null });
    return { ...(await viewOf(q, (await keyRow(q, k.id))!)), key: k.key };
  });
}

/** The key `id` if `caller` may manage it (404 KEY_NOT_FOUND otherwise: others' keys are not disclosed). */
async function managed(q: Queryable, id: string, caller: KeyCaller | undefined, maker: { id: string } | null): Promise<ApiKeyRow> {
  const row = await keyRow(q, id, true);
  const mine = row && (!caller || row.user_id === caller.userId);
  const inScope = mine && (!maker || row.id === maker.id || (await descendantIds(q, maker.id)).includes(row.id));
  if (!row || !inScope) throw new AgwError('KEY_NOT_FOUND', `no key ${id} that ${caller ? 'you' : 'anyone'} may manage`);
  return row;
}

/** Narrows every key made with `id` (and so on down) to fit inside `bounds`. */
async function narrowDescendants(q: Queryable, config: ResolvedConfig, id: string, bounds: KeyBounds): Promise<void> {
  for (const child of await childKeys(q, id)) {
    const before = boundsOfRow(child);
    const after = clampTo(config, before, bounds);
    if (after !== before) await setKeyBounds(q, child.id, after);
    await narrowDescendants(q, config, child.id, after);
  }
}

export async function updateKey(db: Db, config: ResolvedConfig, id: string, change: KeyChange, caller?: KeyCaller): Promise<KeyT> {
  return db.tx(async (q) => {
    const maker = await limitedCaller(q, caller);
    const row = await managed(q, id, caller, maker);
    if (change.name !== undefined) await setKeyName(q, id, change.name?.trim() || null);
    const input = mergeExpiry(change);
    if (input) {
      const bounds = applyLimits(boundsOfRow(row), input);
      await checkFits(q, config, bounds, row.parent_key_id, maker);
      await setKeyBounds(q, id, bounds);
      await narrowDescendants(q, config, id, bounds);
    }
    return viewOf(q, (await keyRow(q, id))!);
  });
}

/** Revokes a key and the keys made with it (idempotent). */
export async function revokeKey(db: Db, id: string, caller?: KeyCaller): Promise<KeyT> {
  return db.tx(async (q) => {
    const maker = await limitedCaller(q, caller);
    await managed(q, id, caller, maker);
    await revokeApiKey(q, id);
    return viewOf(q, (await keyRow(q, id))!);
  });
}

/** The keys `caller` may see (a limited key: itself and the keys made with it), newest first. */
export async function listKeys(q: Queryable, userId: string, caller?: KeyCaller): Promise<KeyT[]> {
  const maker = await limitedCaller(q, caller, false);
  let rows = await listApiKeys(q, userId);
  if (maker) {
    const scope = new Set([maker.id, ...(await descendantIds(q, maker.id))]);
    rows = rows.filter((r) => scope.has(r.id));
  }
  const spent = await keysSpent(q, userId, rows);
  return rows.map((r) => keyView(r, spent.get(r.id) ?? 0));
}
