import type { Queryable } from './db.js';

/**
 * What fixes a skill version (migration 17): its digest, the store's signature over it and
 * the scan findings kept at publish, and the Ed25519 keys that sign. A version published
 * before migration 17 has NULLs until its first read fills them (marketplace/trust/seal.ts).
 */
export interface TrustRow {
  version: string;
  digest: string | null;
  signature_kid: string | null;
  signature: string | null;
  /** JSON array of findings. */
  scan: string | null;
}

export interface VersionTrust {
  digest: string;
  kid: string;
  sig: string;
  /** JSON array of findings. */
  scan: string;
}

const TRUST_COLUMNS = 'version, digest, signature_kid, signature, scan';

export function trustOfVersion(q: Queryable, skillId: number, version: string): Promise<TrustRow | undefined> {
  return q.get<TrustRow>(`SELECT ${TRUST_COLUMNS} FROM skill_versions WHERE skill_id = ? AND version = ?`, [skillId, version]);
}

export function trustOfSkill(q: Queryable, skillId: number): Promise<TrustRow[]> {
  return q.all<TrustRow>(`SELECT ${TRUST_COLUMNS} FROM skill_versions WHERE skill_id = ?`, [skillId]);
}

/** Sets a version's digest, signature and findings (publish, in its transaction; an overwrite replaces them). */
export async function setVersionTrust(q: Queryable, skillId: number, version: string, t: VersionTrust): Promise<void> {
  await q.run('UPDATE skill_versions SET digest = ?, signature_kid = ?, signature = ?, scan = ? WHERE skill_id = ? AND version = ?', [
    t.digest, t.kid, t.sig, t.scan, skillId, version,
  ]);
}

/**
 * Fills them for a version that has none yet, computed from `manifest` (a version published
 * before migration 17); false when another reader, or an overwrite, got there first.
 */
export async function fillVersionTrust(q: Queryable, skillId: number, version: string, manifest: string, t: VersionTrust): Promise<boolean> {
  const r = await q.run(
    'UPDATE skill_versions SET digest = ?, signature_kid = ?, signature = ?, scan = ? WHERE skill_id = ? AND version = ? AND digest IS NULL AND manifest = ?',
    [t.digest, t.kid, t.sig, t.scan, skillId, version, manifest],
  );
  return r.changes > 0;
}

export interface SigningKeyRow {
  kid: string;
  private_jwk: string;
  public_jwk: string;
  created_at: number;
  retired_at: number | null;
}

export function currentSigningKey(q: Queryable): Promise<SigningKeyRow | undefined> {
  return q.get<SigningKeyRow>('SELECT * FROM skill_signing_keys WHERE retired_at IS NULL ORDER BY created_at DESC, kid LIMIT 1');
}

/** Every key, the current one first: retired keys still verify what they signed. */
export function allSigningKeys(q: Queryable): Promise<SigningKeyRow[]> {
  return q.all<SigningKeyRow>('SELECT * FROM skill_signing_keys ORDER BY (CASE WHEN retired_at IS NULL THEN 0 ELSE 1 END), created_at DESC, kid');
}

export async function insertSigningKey(q: Queryable, k: { kid: string; privateJwk: string; publicJwk: string }, now: number): Promise<void> {
  await q.run('INSERT INTO skill_signing_keys (kid, private_jwk, public_jwk, created_at, retired_at) VALUES (?, ?, ?, ?, NULL)', [
    k.kid, k.privateJwk, k.publicJwk, now,
  ]);
}

export async function retireSigningKeys(q: Queryable, now: number): Promise<void> {
  await q.run('UPDATE skill_signing_keys SET retired_at = ? WHERE retired_at IS NULL', [now]);
}
