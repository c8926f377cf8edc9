/**
 * What the CLI trusts: a version's digest and the store's Ed25519 signature over it (GET
 * /api/skills/{id}/versions/{v}/scan), checked with the keys the daemon publishes at
 * /.well-known/agw-skill-keys.json (node:crypto). `agw skill install` checks downloaded files
 * with this before writing any of them; `agw skill verify` checks an installed folder.
 */
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { bundleDigest } from '../../../shared/bundle/digest.js';
import type { SkillKeysT, VersionScanT } from '../../../shared/schemas/skills.js';
import type { Api } from '../../api.js';
import { CliError } from '../../errors.js';

export type Seal = VersionScanT;
export type SkillKey = SkillKeysT['keys'][number];

/** The version's digest, signature and scan findings (public for published versions). */
export function fetchSeal(api: Api, skillId: number, version: string): Promise<Seal> {
  return api.get<Seal>(`/skills/${skillId}/versions/${encodeURIComponent(version)}/scan`, { auth: 'optional' });
}

/** The daemon's skill signing keys (its root URL, not /api). */
export async function fetchKeys(api: Api): Promise<SkillKey[]> {
  const url = `${api.baseUrl.replace(/\/+$/, '').replace(/\/api$/, '')}/.well-known/agw-skill-keys.json`;
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(30_000) });
  } catch (e) {
    throw api.networkError(e);
  }
  const body = (await res.json().catch(() => null)) as SkillKeysT | null;
  if (!res.ok || !body || !Array.isArray(body.keys)) {
    throw new CliError(`${url} did not give the skill signing keys (HTTP ${res.status})`, 'a daemon older than the signed marketplace? nothing was written', 'NO_SIGNING_KEYS');
  }
  return body.keys;
}

export type SignatureCheck = 'valid' | 'invalid' | 'unknown-key';

/** Whether `signature` is the store's Ed25519 signature over `digest` with one of `keys`. */
export function checkSignature(digest: string, signature: { kid: string; sig: string }, keys: readonly SkillKey[]): SignatureCheck {
  const jwk = keys.find((k) => k.kid === signature.kid && k.kty === 'OKP' && k.crv === 'Ed25519');
  if (!jwk) return 'unknown-key';
  try {
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as JsonWebKey, format: 'jwk' });
    return verify(null, Buffer.from(digest, 'utf8'), key, Buffer.from(signature.sig, 'base64url')) ? 'valid' : 'invalid';
  } catch {
    return 'invalid';
  }
}

/**
 * Throws unless `files` are exactly what the store signed: their digest is the seal's, and
 * the seal's signature holds with a published key.
 */
export function assertSealed(label: string, files: readonly { path: string; content: Uint8Array }[], seal: Seal, keys: readonly SkillKey[]): void {
  const got = bundleDigest(files);
  if (got !== seal.digest) {
    throw new CliError(
      `${label}: the downloaded files have digest ${got} but the version's is ${seal.digest}; nothing was written`,
      'the bundle was changed on its way or in the store: retry, and report it if it happens again',
      'DIGEST_MISMATCH',
    );
  }
  const sig = checkSignature(seal.digest, seal.signature, keys);
  if (sig !== 'valid') {
    const why = sig === 'unknown-key' ? `by a key the daemon does not publish (${seal.signature.kid})` : `that does not verify with key ${seal.signature.kid}`;
    throw new CliError(`${label}: digest ${seal.digest} carries a signature ${why}; nothing was written`, 'do not use this version; report it to the marketplace operator', 'SIGNATURE_INVALID');
  }
}
