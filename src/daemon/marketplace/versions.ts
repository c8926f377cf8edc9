import semver from 'semver';
import type { SkillStatus } from '../store/skills.js';

/**
 * Version order. Two SemVer versions compare by SemVer precedence; a SemVer version ranks
 * above any other string; two non-SemVer versions compare by publish time (then by text).
 * Lists show the highest first, so non-SemVer versions come after the SemVer ones.
 */
export interface Versioned {
  version: string;
  published_at: number;
  status: SkillStatus;
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

/**
 * The current version: the highest published version; when none is published (an
 * archived or draft-only skill) the highest archived one, else the highest draft.
 */
export function pickCurrent(versions: readonly Versioned[]): string | null {
  for (const status of ['published', 'archived', 'draft'] as const) {
    const top = sortVersions(versions.filter((v) => v.status === status))[0];
    if (top) return top.version;
  }
  return null;
}
