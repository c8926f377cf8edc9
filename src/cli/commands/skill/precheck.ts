/**
 * What `agw skill publish` checks before a byte is uploaded: a SemVer version (unless
 * --allow-non-semver), a description that is not the template's placeholder, and, asking the
 * daemon, a category it allows (GET /api/skills/categories), a slug the caller may publish
 * under and a version that does not exist yet (unless --overwrite).
 */
import semver from 'semver';
import type { BundleValidation } from '../../../shared/bundle/index.js';
import type { OwnerVersionsT, SkillCategoriesT, SkillT } from '../../../shared/schemas/skills.js';
import type { Api } from '../../api.js';
import { CliError, UsageError } from '../../errors.js';

/** A SemVer version, exactly (`1.1` and `v1.0.0` are not); else a usage error naming the nearest one. */
export function checkVersion(version: string, allowNonSemver: boolean | undefined): void {
  if (!version.trim() || /[\s/]/.test(version)) throw new UsageError(`invalid --version "${version}"`, 'use a SemVer version such as 1.0.0');
  if (allowNonSemver || semver.valid(version) === version) return;
  const near = semver.coerce(version, { includePrerelease: true })?.version;
  throw new UsageError(
    `--version ${version} is not SemVer (MAJOR.MINOR.PATCH), so the marketplace would never make it current over SemVer versions`,
    `${near ? `use --version ${near}` : 'use a version such as 1.0.0'}, or pass --allow-non-semver to publish it as it is`,
  );
}

/** The template's placeholder description never reaches the marketplace. */
export function checkDescription(v: BundleValidation): void {
  if (v.warnings.some((w) => w.rule === 'PLACEHOLDER_DESCRIPTION')) {
    throw new CliError(
      'SKILL.md still has the template’s placeholder description; the marketplace lists the description and agents pick skills by it',
      'write what the skill does and when an agent should use it in "description", then publish again',
      'PLACEHOLDER_DESCRIPTION',
    );
  }
}

const status = (e: unknown) => (e as { status?: number }).status;

export interface PublishTarget {
  slug: string;
  version: string;
  category?: string;
  overwrite?: boolean;
}

/** The daemon-side checks; a daemon without GET /skills/categories (older) skips that one. */
export async function checkRemote(api: Api, t: PublishTarget): Promise<void> {
  let existing: SkillT | null = null;
  try {
    existing = await api.get<SkillT>(`/skills/by-slug/${encodeURIComponent(t.slug)}`, { auth: 'optional' });
  } catch (e) {
    if (status(e) !== 404) throw e;
  }
  let categories: string[] | null = null;
  try {
    categories = (await api.get<SkillCategoriesT>('/skills/categories', { auth: 'none' })).items;
  } catch (e) {
    if (status(e) !== 404) throw e;
  }
  if (categories) {
    const wanted = t.category ?? (existing ? undefined : 'other');
    if (wanted !== undefined && !categories.includes(wanted)) {
      const what = t.category === undefined ? 'a first publish needs --category (this marketplace has no "other")' : `unknown category "${wanted}"`;
      throw new UsageError(`${what}; the categories are: ${categories.join(', ')}`, `e.g. --category ${categories[0]}`);
    }
  }
  if (!existing) return;
  let owned: OwnerVersionsT;
  try {
    owned = await api.get<OwnerVersionsT>(`/skills/${existing.id}/versions`);
  } catch (e) {
    if (status(e) === 403) {
      throw new CliError(`the slug "${t.slug}" belongs to another publisher`, 'change "name" in SKILL.md, or pass --slug', 'SLUG_TAKEN');
    }
    throw e;
  }
  const same = owned.versions.find((v) => v.version === t.version);
  if (same && !t.overwrite) {
    throw new CliError(
      `version ${t.version} of "${t.slug}" already exists (${same.status}); nothing was uploaded`,
      `publish a new version, or pass --overwrite to replace ${t.version}`,
      'VERSION_EXISTS',
    );
  }
}
