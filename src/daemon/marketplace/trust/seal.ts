import { DigestBuilder, byPathBytes } from '../../../shared/bundle/digest.js';
import { AgwError } from '../../../shared/errors.js';
import { hasErrors, type Finding } from '../../../shared/scan/index.js';
import type { Db } from '../../store/db.js';
import { getBlob } from '../../store/blobs.js';
import { getVersion, parseManifest, type ManifestEntry } from '../../store/skills.js';
import { fillVersionTrust, trustOfSkill, trustOfVersion, type TrustRow } from '../../store/skill-trust.js';
import { stagedBytes, type StagedFile } from '../staged.js';
import { signDigest, type SignatureT } from './keys.js';
import { scanPool } from './scan-pool.js';

/**
 * A version's seal: its digest, the store's signature over it and the scan findings kept with
 * it. Publish computes it from the uploaded files (one file in memory at a time, each scanned
 * in a worker thread of the scan pool while the event loop goes on) and refuses a bundle with
 * an error finding before anything is stored. A version published before migration 17 gets
 * its seal at its first read, from its stored blobs (once, however many read it at once).
 */
export interface VersionSeal {
  digest: string;
  signature: SignatureT;
  findings: Finding[];
}

/** Digest and findings of files in path order, read one at a time. */
async function digestAndScan<T extends { path: string }>(files: readonly T[], read: (f: T) => Promise<Uint8Array>): Promise<{ digest: string; findings: Finding[] }> {
  const digest = new DigestBuilder();
  const findings: Finding[] = [];
  for (const f of [...files].sort((a, b) => byPathBytes(a.path, b.path))) {
    const data = await read(f);
    digest.add(f.path, data);
    findings.push(...(await scanPool.scan(f.path, data)));
  }
  return { digest: digest.digest(), findings };
}

/** 400 BUNDLE_REJECTED with every finding (errors and warnings) in details.findings. */
export function bundleRejected(findings: Finding[]): AgwError {
  const errors = findings.filter((f) => f.severity === 'error');
  const first = errors[0];
  return new AgwError(
    'BUNDLE_REJECTED',
    `the scan refused the bundle (${errors.length} error${errors.length === 1 ? '' : 's'}; first: ${first.path}${first.line ? `:${first.line}` : ''}: ${first.rule}: ${first.message})`,
    { findings },
  );
}

/** The seal of files being published; throws BUNDLE_REJECTED on an error finding (nothing signed, nothing stored). */
export async function sealUpload(db: Db, files: readonly StagedFile[]): Promise<VersionSeal> {
  const { digest, findings } = await digestAndScan(files, stagedBytes);
  if (hasErrors(findings)) throw bundleRejected(findings);
  return { digest, signature: await signDigest(db, digest), findings };
}

const parse = (row: TrustRow): VersionSeal => ({
  digest: row.digest!,
  signature: { kid: row.signature_kid!, sig: row.signature! },
  findings: JSON.parse(row.scan ?? '[]') as Finding[],
});

/** Computes, signs and stores the seal of a version that has none (published before migration 17). */
async function fill(db: Db, skillId: number, version: string): Promise<VersionSeal> {
  const v = await getVersion(db, skillId, version);
  if (!v) throw new AgwError('VERSION_NOT_FOUND', `skill ${skillId} has no version "${version}"`);
  const read = async (f: ManifestEntry) => {
    const data = await getBlob(db, f.sha256);
    if (!data) throw new Error(`blob ${f.sha256} of ${f.path} is missing`);
    return data;
  };
  const { digest, findings } = await digestAndScan(parseManifest(v), read);
  const signature = await signDigest(db, digest);
  const trust = { digest, kid: signature.kid, sig: signature.sig, scan: JSON.stringify(findings) };
  if (await fillVersionTrust(db, skillId, version, v.manifest, trust)) return { digest, signature, findings };
  const now = await trustOfVersion(db, skillId, version); // filled by another reader, or overwritten meanwhile
  return now?.digest ? parse(now) : fill(db, skillId, version);
}

/** Seals being filled, per store and version: readers at the same time share one scan. */
const filling = new WeakMap<Db, Map<string, Promise<VersionSeal>>>();

function fillOnce(db: Db, skillId: number, version: string): Promise<VersionSeal> {
  let m = filling.get(db);
  if (!m) filling.set(db, (m = new Map()));
  const key = `${skillId}\u0000${version}`;
  let p = m.get(key);
  if (!p) {
    const own = m;
    p = fill(db, skillId, version).finally(() => own.delete(key));
    m.set(key, p);
  }
  return p;
}

/** A version's seal (filled on first read for a version that has none). */
export async function sealOf(db: Db, skillId: number, version: string): Promise<VersionSeal> {
  const row = await trustOfVersion(db, skillId, version);
  if (!row) throw new AgwError('VERSION_NOT_FOUND', `skill ${skillId} has no version "${version}"`);
  return row.digest ? parse(row) : fillOnce(db, skillId, version);
}

/** The seals of every version of a skill, by version. */
export async function sealsOfSkill(db: Db, skillId: number): Promise<Map<string, VersionSeal>> {
  const out = new Map<string, VersionSeal>();
  for (const row of await trustOfSkill(db, skillId)) {
    out.set(row.version, row.digest ? parse(row) : await fillOnce(db, skillId, row.version));
  }
  return out;
}
