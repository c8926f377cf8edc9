import { createPrivateKey, generateKeyPairSync, sign, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint, type JWK } from 'jose';
import type { Db, Queryable } from '../../store/db.js';
import { allSigningKeys, currentSigningKey, insertSigningKey, retireSigningKeys } from '../../store/skill-trust.js';

/**
 * The store's Ed25519 keys that sign skill versions (node:crypto; the kid is the RFC 7638
 * thumbprint of the public JWK). Like the OAuth signing keys (oauth/keys.ts), exactly one is
 * current and rotation makes a new one; unlike them, a retired key is never deleted: the
 * versions it signed keep verifying with it, for as long as they exist. All of them are
 * published at /.well-known/agw-skill-keys.json.
 */
export const SKILL_SIGNING_ALG = 'EdDSA';

export interface SignatureT {
  kid: string;
  /** base64url Ed25519 signature over the digest string's UTF-8 bytes. */
  sig: string;
}

interface NewKey {
  kid: string;
  privateJwk: string;
  publicJwk: string;
}

async function newKey(): Promise<NewKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pub = publicKey.export({ format: 'jwk' }) as JWK;
  const kid = await calculateJwkThumbprint({ kty: pub.kty, crv: pub.crv, x: pub.x });
  const meta = { kid, alg: SKILL_SIGNING_ALG, use: 'sig' };
  return {
    kid,
    privateJwk: JSON.stringify({ ...(privateKey.export({ format: 'jwk' }) as JWK), ...meta }),
    publicJwk: JSON.stringify({ kty: pub.kty, crv: pub.crv, x: pub.x, ...meta }),
  };
}

/** Any number: the advisory lock that serialises skill key creation and rotation across daemons. */
const SKILL_KEYS_LOCK = 7_461_679;

async function lockKeys(q: Queryable): Promise<void> {
  if (q.dialect === 'postgres') await q.get(`SELECT pg_advisory_xact_lock(${SKILL_KEYS_LOCK})`);
}

/** The current key, created on first use (safe when several daemons start at once). */
async function ensureKey(db: Db): Promise<{ kid: string; private_jwk: string }> {
  const have = await currentSigningKey(db);
  if (have) return have;
  const k = await newKey();
  return db.tx(async (q) => {
    await lockKeys(q);
    const raced = await currentSigningKey(q);
    if (raced) return raced;
    await insertSigningKey(q, k, Date.now());
    return { kid: k.kid, private_jwk: k.privateJwk };
  });
}

/** The store's signature over a version digest, with its current key. */
export async function signDigest(db: Db, digest: string): Promise<SignatureT> {
  const key = await ensureKey(db);
  const privateKey = createPrivateKey({ key: JSON.parse(key.private_jwk) as JsonWebKey, format: 'jwk' });
  return { kid: key.kid, sig: sign(null, Buffer.from(digest, 'utf8'), privateKey).toString('base64url') };
}

/** A new current key; the old one is retired (it still verifies, and is still published). */
export async function rotateSkillKey(db: Db): Promise<{ kid: string; previous: string | null }> {
  const k = await newKey();
  return db.tx(async (q) => {
    await lockKeys(q);
    const old = await currentSigningKey(q);
    const now = Date.now();
    await retireSigningKeys(q, now);
    await insertSigningKey(q, k, now);
    return { kid: k.kid, previous: old?.kid ?? null };
  });
}

/** Every public key (the current one first), as JWKs (OKP, Ed25519, kid). */
export async function skillJwks(q: Queryable): Promise<JWK[]> {
  return (await allSigningKeys(q)).map((r) => JSON.parse(r.public_jwk) as JWK);
}
