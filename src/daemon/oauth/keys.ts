import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';
import type { Db, Queryable } from '../store/db.js';

/**
 * The RS256 signing keys, stored in `oauth_keys` (private key as a JWK: protect the data
 * directory). Exactly one key is current (`retired_at` NULL). Rotation retires the current
 * key and makes a new one; a retired key stays in the JWKS for `RETIRED_KEY_KEEP_MS`, long
 * enough for every token it signed to expire, and is deleted after that.
 */
export const SIGNING_ALG = 'RS256';
/** Longest life of anything we sign (access and ID tokens: 900 s) plus clock skew. */
export const RETIRED_KEY_KEEP_MS = (900 + 120) * 1000;

export interface KeyRow {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

interface NewKey {
  kid: string;
  privateJwk: JWK;
  publicJwk: JWK;
}

/** A fresh RSA key pair; the kid is the RFC 7638 thumbprint of the public key. */
async function newKey(): Promise<NewKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const meta = { kid, alg: SIGNING_ALG, use: 'sig' };
  return { kid, privateJwk: { ...(await exportJWK(privateKey)), ...meta }, publicJwk: { ...publicJwk, ...meta } };
}

async function insertKey(q: Queryable, k: NewKey, now: number): Promise<void> {
  await q.run('INSERT INTO oauth_keys (kid, private_jwk, public_jwk, created_at, retired_at) VALUES (?, ?, ?, ?, NULL)', [
    k.kid,
    JSON.stringify(k.privateJwk),
    JSON.stringify(k.publicJwk),
    now,
  ]);
}

/** Any number: the advisory lock that serialises key creation and rotation across daemons. */
const KEYS_LOCK = 7_461_678;

/** SQLite's BEGIN IMMEDIATE is already exclusive; PostgreSQL (READ COMMITTED) needs the lock. */
async function lockKeys(q: Queryable): Promise<void> {
  if (q.dialect === 'postgres') await q.get(`SELECT pg_advisory_xact_lock(${KEYS_LOCK})`);
}

export function currentKeyRow(q: Queryable): Promise<KeyRow | undefined> {
  return q.get<KeyRow>('SELECT * FROM oauth_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid LIMIT 1');
}

/** Creates the first signing key unless one exists (safe when several daemons start at once). */
export async function ensureSigningKey(db: Db): Promise<string> {
  const have = await currentKeyRow(db);
  if (have) return have.kid;
  const k = await newKey(); // generated outside the transaction
  return db.tx(async (q) => {
    await lockKeys(q);
    const raced = await currentKeyRow(q);
    if (raced) return raced.kid;
    await insertKey(q, k, Date.now());
    return k.kid;
  });
}

/**
 * Makes a new current key and retires the old one (kept for verification until every
 * token it signed expired); deletes keys retired longer ago than that.
 */
export async function rotateSigningKey(db: Db): Promise<{ kid: string; previous: string | null }> {
  const k = await newKey();
  return db.tx(async (q) => {
    await lockKeys(q);
    const now = Date.now();
    const old = await currentKeyRow(q);
    await q.run('UPDATE oauth_keys SET retired_at = ? WHERE retired_at IS NULL', [now]);
    await q.run('DELETE FROM oauth_keys WHERE retired_at IS NOT NULL AND retired_at < ?', [now - RETIRED_KEY_KEEP_MS]);
    await insertKey(q, k, now);
    return { kid: k.kid, previous: old?.kid ?? null };
  });
}

/** The public keys that verify tokens now: the current key and recently retired ones. */
export async function publicJwks(q: Queryable, now = Date.now()): Promise<JWK[]> {
  const rows = await q.all<Pick<KeyRow, 'public_jwk'>>(
    'SELECT public_jwk FROM oauth_keys WHERE retired_at IS NULL OR retired_at >= ? ORDER BY created_at DESC, kid',
    [now - RETIRED_KEY_KEEP_MS],
  );
  return rows.map((r) => JSON.parse(r.public_jwk) as JWK);
}
