import { createHash, timingSafeEqual } from 'node:crypto';
import { forUpdate, type Queryable } from './db.js';
import { newId, newSecret } from '../../shared/ids.js';
import { BUDGET_PERIODS } from '../../shared/schemas/keys.js';

/**
 * Limits a key may carry (CONTRACT "Keys with limits"), as stored: null = no such limit.
 * The rules that use them are money/key-limits.ts (periods) and keys/bounds.ts (nesting).
 */
export type BudgetPeriod = 'day' | 'week' | 'month' | 'total';

export interface KeyLimits {
  /** nano-USD per budgetPeriod */
  budgetNano: number | null;
  budgetPeriod: BudgetPeriod;
  rpm: number | null;
  tpm: number | null;
  /** allowed model ids or aliases */
  models: readonly string[] | null;
}

/**
 * What a key may do: its limits (null = none) and its expiry (null = never). "A key made
 * with a key never gets more than that key has": `tooWide` says which limit of a key
 * would exceed another's, `clampTo` narrows a key to fit inside another (what happens
 * to the keys made with a key whose limits are narrowed).
 */
export interface KeyBounds {
  limits: KeyLimits | null;
  expiresAt: number | null;
}

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
  /** limits (version 8): NULL = no such limit; models is a JSON array */
  budget_nusd: number | null;
  budget_period: string | null;
  rpm: number | null;
  tpm: number | null;
  models: string | null;
  expires_at: number | null;
  /** the limited key this one was made with (its limits stay within that key's) */
  parent_key_id: string | null;
}

type LimitColumns = Pick<ApiKeyRow, 'budget_nusd' | 'budget_period' | 'rpm' | 'tpm' | 'models' | 'expires_at'>;

const PERIODS: readonly string[] = BUDGET_PERIODS;
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function parseModels(text: string | null): readonly string[] | null {
  if (text === null) return null;
  try {
    const v = JSON.parse(text) as unknown;
    return Array.isArray(v) ? Object.freeze(v.filter((x): x is string => typeof x === 'string')) : [];
  } catch {
    return []; // unreadable: allows nothing rather than everything
  }
}

/** A key row's limits and expiry (limits null when it has none). */
export function boundsOfRow(r: LimitColumns): KeyBounds {
  const budgetNano = num(r.budget_nusd);
  const limits: KeyLimits = {
    budgetNano,
    budgetPeriod: budgetNano !== null && r.budget_period && PERIODS.includes(r.budget_period) ? (r.budget_period as BudgetPeriod) : 'total',
    rpm: num(r.rpm),
    tpm: num(r.tpm),
    models: parseModels(r.models),
  };
  const none = budgetNano === null && limits.rpm === null && limits.tpm === null && limits.models === null;
  return { limits: none ? null : Object.freeze(limits), expiresAt: num(r.expires_at) };
}

function limitParams(b: KeyBounds): (string | number | null)[] {
  const l = b.limits;
  return [
    l?.budgetNano ?? null,
    l && l.budgetNano !== null ? l.budgetPeriod : null,
    l?.rpm ?? null,
    l?.tpm ?? null,
    l?.models ? JSON.stringify(l.models) : null,
    b.expiresAt,
  ];
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export async function createApiKey(
  q: Queryable,
  userId: string,
  name?: string | null,
  opts: { bounds?: KeyBounds; parentKeyId?: string | null } = {},
): Promise<{ id: string; key: string; lookup: string }> {
  const lookup = randomHex12();
  const key = `${KEY_PREFIX}${lookup}_${newSecret(32)}`;
  const id = newId('key');
  await q.run(
    `INSERT INTO api_keys (id, user_id, name, lookup, hash, created_at, budget_nusd, budget_period, rpm, tpm, models, expires_at, parent_key_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, userId, name ?? null, lookup, hashKey(key), Date.now(), ...limitParams(opts.bounds ?? { limits: null, expiresAt: null }), opts.parentKeyId ?? null],
  );
  return { id, key, lookup };
}

/** Replaces a key's limits and expiry. */
export async function setKeyBounds(q: Queryable, id: string, b: KeyBounds): Promise<void> {
  await q.run('UPDATE api_keys SET budget_nusd = ?, budget_period = ?, rpm = ?, tpm = ?, models = ?, expires_at = ? WHERE id = ?', [...limitParams(b), id]);
}

export async function setKeyName(q: Queryable, id: string, name: string | null): Promise<void> {
  await q.run('UPDATE api_keys SET name = ? WHERE id = ?', [name, id]);
}

/** A key's row; `lock`: held until the transaction ends (PostgreSQL), for a read-check-write. */
export function keyRow(q: Queryable, id: string, lock = false): Promise<ApiKeyRow | undefined> {
  return q.get<ApiKeyRow>(`SELECT * FROM api_keys WHERE id = ?${lock ? forUpdate(q) : ''}`, [id]);
}

/** The keys made with key `id` (one level). */
export function childKeys(q: Queryable, id: string): Promise<ApiKeyRow[]> {
  return q.all<ApiKeyRow>('SELECT * FROM api_keys WHERE parent_key_id = ? ORDER BY created_at', [id]);
}

/** The ids of every key made with key `id`, and with those, and so on (not `id` itself). */
export async function descendantIds(q: Queryable, id: string): Promise<string[]> {
  const rows = await q.all<{ id: string }>(
    `WITH RECURSIVE d(id, depth) AS (
       SELECT id, 1 FROM api_keys WHERE parent_key_id = ?
       UNION ALL SELECT k.id, d.depth + 1 FROM api_keys k JOIN d ON k.parent_key_id = d.id WHERE d.depth < 64)
     SELECT id FROM d`,
    [id],
  );
  return rows.map((r) => r.id);
}

/** The keys `id` was made with, nearest first (empty for a key made otherwise). */
export function ancestorKeys(q: Queryable, id: string): Promise<(ApiKeyRow & { depth: number })[]> {
  return q.all<ApiKeyRow & { depth: number }>(
    `WITH RECURSIVE a(id, parent, depth) AS (
       SELECT k.parent_key_id, p.parent_key_id, 1 FROM api_keys k JOIN api_keys p ON p.id = k.parent_key_id WHERE k.id = ?
       UNION ALL SELECT a.parent, k.parent_key_id, a.depth + 1 FROM a JOIN api_keys k ON k.id = a.parent WHERE a.depth < 64)
     SELECT k.*, a.depth FROM a JOIN api_keys k ON k.id = a.id ORDER BY a.depth`,
    [id],
  );
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

/**
 * Revokes a key and every key made with it (idempotent); false when there is no such key.
 * Run it in a transaction (the descendants are read, then written).
 */
export async function revokeApiKey(q: Queryable, id: string): Promise<boolean> {
  if (!(await q.get('SELECT id FROM api_keys WHERE id = ?', [id]))) return false;
  const now = Date.now();
  for (const k of [id, ...(await descendantIds(q, id))]) {
    await q.run('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL', [now, k]);
  }
  return true;
}

export function listApiKeys(q: Queryable, userId: string): Promise<ApiKeyRow[]> {
  return q.all<ApiKeyRow>('SELECT * FROM api_keys WHERE user_id = ? ORDER BY created_at DESC', [userId]);
}

/** A live key as authentication sees it: who, the effective tier, its limits and expiry. */
export interface VerifiedKey extends KeyBounds {
  keyId: string;
  userId: string;
  tier: string;
  /** the limits of the keys it was made with, nearest first (absent for a key made otherwise) */
  ancestors?: { keyId: string; limits: KeyLimits }[];
}

/**
 * One query for the gateway's hot path: the live key with its limits, its user and the
 * effective tier (an active organization's tier wins, the first joined one when there
 * are several). A key made with a limited key costs one more query (its makers' limits).
 * An expired key is returned (with `expiresAt`): the caller answers 401 KEY_EXPIRED.
 */
export async function verifyApiKeyWithTier(q: Queryable, presented: string): Promise<VerifiedKey | undefined> {
  const m = KEY_RE.exec(presented);
  if (!m) return undefined;
  const row = await q.get<LimitColumns & { id: string; user_id: string; hash: string; revoked_at: number | null; parent_key_id: string | null; tier: string; org_tier: string | null }>(
    `SELECT k.id, k.user_id, k.hash, k.revoked_at, k.budget_nusd, k.budget_period, k.rpm, k.tpm, k.models, k.expires_at, k.parent_key_id, u.tier,
            (SELECT o.tier FROM org_members om JOIN organizations o ON o.id = om.org_id
              WHERE om.user_id = k.user_id AND o.active = 1 ORDER BY om.created_at LIMIT 1) AS org_tier
       FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.lookup = ?`,
    [m[1]],
  );
  if (!row || row.revoked_at !== null) return undefined;
  const a = Buffer.from(hashKey(presented), 'hex');
  const b = Buffer.from(row.hash, 'hex');
  if (a.length !== b.length || !timingSafeEqual(a, b)) return undefined;
  const v: VerifiedKey = { keyId: row.id, userId: row.user_id, tier: row.org_tier ?? row.tier, ...boundsOfRow(row) };
  if (row.parent_key_id !== null) {
    const chain = (await ancestorKeys(q, row.id)).flatMap((k) => {
      const l = boundsOfRow(k).limits;
      return l ? [{ keyId: k.id, limits: l }] : [];
    });
    if (chain.length) v.ancestors = chain;
  }
  return v;
}
