import { nanoToUsd } from '../../shared/money.js';
import type { SkillT } from '../../shared/schemas/skills.js';
import { displayName, parseManifest, type SkillRow, type VersionRow } from '../store/skills.js';
import { isPrerelease, sortVersions } from '../../shared/skill-versions.js';
import type { VersionSeal } from './trust/seal.js';

/** Store rows → the contract's records (USD numbers, ISO dates). */
const iso = (ms: number) => new Date(Number(ms)).toISOString();

export function skillView(s: SkillRow): SkillT {
  return {
    id: Number(s.id),
    slug: s.slug,
    name: s.name,
    description: s.description,
    category: s.category,
    price: nanoToUsd(s.price_nusd),
    status: s.status,
    currentVersion: s.current_version,
    ownerId: s.owner_id,
    ownerName: displayName(s.owner_name, s.owner_email),
    installCount: Number(s.install_count),
    createdAt: iso(s.created_at),
    updatedAt: iso(s.updated_at),
  };
}

export interface VersionContext {
  current: string | null;
  installers: Map<string, number>;
  names: Map<string, string>;
  /** Each version's digest and signature (trust/seal.ts). */
  seals: Map<string, VersionSeal>;
}

export function versionView(v: VersionRow, c: VersionContext) {
  return {
    version: v.version,
    publishedAt: iso(v.published_at),
    installerCount: c.installers.get(v.version) ?? 0,
    isCurrent: v.version === c.current,
    notes: v.notes,
    notesUpdatedAt: v.notes_updated_at === null ? null : iso(v.notes_updated_at),
    notesUpdatedByName: v.notes_updated_by === null ? null : (c.names.get(v.notes_updated_by) ?? null),
    ...sealView(c.seals.get(v.version)),
    status: v.status,
    prerelease: isPrerelease(v.version),
  };
}

/** A version's digest and signature, as every version record carries them. */
export function sealView(seal: VersionSeal | undefined): { digest: string; signature: { kid: string; sig: string } } {
  if (!seal) throw new Error('a version without its seal');
  return { digest: seal.digest, signature: seal.signature };
}

/** The public-versions answer (highest version first). */
export function publicVersionsView(s: SkillRow, versions: VersionRow[], c: VersionContext) {
  return {
    skillId: Number(s.id),
    slug: s.slug,
    currentVersion: s.current_version,
    versions: sortVersions(versions).map((v) => versionView(v, c)),
  };
}

/** The owner's view: every version with its status, file count and total size. */
export function ownerVersionsView(s: SkillRow, versions: VersionRow[], c: VersionContext) {
  return {
    skillId: Number(s.id),
    slug: s.slug,
    currentVersion: s.current_version,
    currentVersionPinned: s.pinned_version !== null && s.pinned_version === s.current_version,
    versions: sortVersions(versions).map((v) => {
      const files = parseManifest(v);
      return {
        ...versionView(v, c),
        fileCount: files.length,
        size: files.reduce((n, f) => n + f.size, 0),
      };
    }),
  };
}
