import semver from 'semver';

/**
 * Skill versions: their order and which one is current (docs/marketplace.md, "Current
 * version"). Shared: the daemon decides with it, the store's migration 18 recomputes with it,
 * the CLI marks prereleases with it.
 *
 * Order: two SemVer versions compare by SemVer precedence; a SemVer version ranks above any
 * other string; two non-SemVer versions compare by publish time (then by text). Lists show
 * the highest first, so non-SemVer versions come after the SemVer ones.
 */
export type VersionStatus = 'draft' | 'published' | 'archived';

export interface Versioned {
  version: string;
  published_at: number;
  status: VersionStatus;
}

export function compareVersions(a: Versioned, b: Versioned): number {
  const va = semver.valid(a.version);
  const vb = semver.valid(b.version);
  if (va && vb) return semver.compare(va, vb) || a.version.localeCompare(b.version);
  if (va) return 1;
  if (vb) return -1;
  return Number(a.published_at) - Number(b.published_at) || a.version.localeCompare(b.version);
}

/** Highest first. */
export function sortVersions<T extends Versioned>(versions: readonly T[]): T[] {
  return [...versions].sort((a, b) => compareVersions(b, a));
}

/** A SemVer prerelease (`1.2.0-beta.1`); non-SemVer strings are not. */
export function isPrerelease(version: string): boolean {
  return semver.valid(version) !== null && semver.prerelease(version) !== null;
}

/** The highest of `versions`, a release before any prerelease. */
function highest(versions: readonly Versioned[]): string | undefined {
  return (sortVersions(versions.filter((v) => !isPrerelease(v.version)))[0] ?? sortVersions(versions)[0])?.version;
}

/**
 * The current version: the owner's choice (`pinned`) while it is published; else the highest
 * published release (a prerelease only when no release is published); with nothing published
 * (a skill never published) the highest draft, so its owner sees one. An archived version is
 * never current.
 */
export function pickCurrent(versions: readonly Versioned[], pinned?: string | null): string | null {
  const published = versions.filter((v) => v.status === 'published');
  if (pinned && published.some((v) => v.version === pinned)) return pinned;
  return highest(published) ?? highest(versions.filter((v) => v.status === 'draft')) ?? null;
}
