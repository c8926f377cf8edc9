import { AgwError } from '../../shared/errors.js';
import { bundleErrorCode, checkSkillName, validateBundle, type Problem, type SkillMeta } from '../../shared/bundle/index.js';
import { usdToNano } from '../../shared/money.js';
import type { PublishFieldsT } from '../../shared/schemas/skills.js';
import type { AppContext } from '../context/index.js';
import type { Queryable } from '../store/db.js';
import { hasBlob, putBlob } from '../store/blobs.js';
import { claimSlug, getVersion, listVersions, lockSkill, skillBySlug, updateSkill, upsertVersion, type ManifestEntry, type SkillStatus } from '../store/skills.js';
import { stagedBytes, toBundleEntries, type StagedFile } from './staged.js';
import { isPrerelease, pickCurrent } from '../../shared/skill-versions.js';
import { sealUpload } from './trust/seal.js';
import { setVersionTrust } from '../store/skill-trust.js';

/**
 * Publishing one version: validate the bundle (every problem at once), resolve slug, name,
 * description and category, then store skill row, version row and blobs in ONE transaction,
 * so a failed publish leaves nothing behind. The current version follows the rule
 * (shared/skill-versions.ts: a prerelease never becomes current over a release); publishing
 * a release also drops the owner's choice of current version.
 */
export async function publishSkill(
  ctx: AppContext,
  userId: string,
  fields: PublishFieldsT,
  files: readonly StagedFile[],
): Promise<{ id: number; version: string }> {
  // warnings (unknown fields, a long body, …) never refuse a publish; they travel with a refusal
  const checked = validateBundle(toBundleEntries(files));
  if (!checked.ok || !checked.meta) throw bundleError(checked.problems, checked.warnings);
  const meta: SkillMeta = checked.meta;

  const slug = fields.slug ?? meta.name;
  if (checkSkillName(slug)) {
    throw new AgwError('INVALID_REQUEST', `slug "${slug}" is not valid: 1-64 lowercase letters, digits and single inner hyphens`, {
      field: 'slug',
      location: 'body',
    });
  }
  if (fields.category !== undefined) checkCategory(ctx, fields.category);
  const status = fields.status ?? 'published';
  const manifest: ManifestEntry[] = files
    .map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 }))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // digest and scan: an error finding refuses the publish here, before anything is stored
  const seal = await sealUpload(ctx.db, files);

  return ctx.db.tx(async (q) => {
    const now = Date.now();
    const { id, status: skillStatus, pinned } = await ownSlug(ctx, q, userId, slug, fields, meta, status, now);
    await lockSkill(q, id);
    const existing = await getVersion(q, id, fields.version);
    if (existing && !fields.overwrite) {
      throw new AgwError('VERSION_EXISTS', `version ${fields.version} of "${slug}" already exists; send overwrite=true to replace it`);
    }
    await storeBlobs(q, files);
    await upsertVersion(q, { skillId: id, version: fields.version, status, notes: fields.notes, manifest, now });
    await setVersionTrust(q, id, fields.version, { digest: seal.digest, ...seal.signature, scan: JSON.stringify(seal.findings) });
    const versions = await listVersions(q, id);
    // publishing a release hands the current version back to the rule, as npm publish moves `latest`
    const repin = status === 'published' && !isPrerelease(fields.version) && pinned !== null;
    const current = pickCurrent(versions, repin ? null : pinned);
    // a published skill never shows a draft: if a draft overwrite took its last published version, it hides
    const hide = status === 'draft' && skillStatus === 'published' && !versions.some((v) => v.status === 'published');
    await updateSkill(
      q,
      id,
      {
        name: fields.name,
        description: fields.description,
        category: fields.category,
        priceNusd: fields.price === undefined ? undefined : usdToNano(fields.price),
        status: status === 'published' ? 'published' : hide ? 'draft' : undefined,
        currentVersion: current,
        pinnedVersion: repin ? null : undefined,
      },
      now,
    );
    return { id, version: fields.version };
  });
}

/** The skill id for `slug`: claimed now for a new slug, or the caller's existing skill; 403 SLUG_TAKEN otherwise. */
async function ownSlug(
  ctx: AppContext,
  q: Queryable,
  userId: string,
  slug: string,
  fields: PublishFieldsT,
  meta: SkillMeta,
  status: 'published' | 'draft',
  now: number,
): Promise<{ id: number; status: SkillStatus; pinned: string | null }> {
  let skill = await skillBySlug(q, slug);
  if (!skill) {
    const id = await claimSlug(q, {
      slug,
      name: fields.name ?? meta.name,
      description: fields.description ?? meta.description,
      category: fields.category ?? defaultCategory(ctx),
      priceNusd: usdToNano(fields.price ?? 0),
      status,
      ownerId: userId,
      now,
    });
    if (id !== undefined) return { id, status, pinned: null };
    skill = await skillBySlug(q, slug); // claimed concurrently by another daemon
  }
  if (!skill || skill.owner_id !== userId) {
    throw new AgwError('SLUG_TAKEN', `the slug "${slug}" belongs to another publisher; choose another slug`);
  }
  return { id: Number(skill.id), status: skill.status, pinned: skill.pinned_version };
}

export function checkCategory(ctx: AppContext, category: string): void {
  const allowed = ctx.config.marketplace.categories;
  if (!allowed.includes(category)) {
    throw new AgwError('INVALID_CATEGORY', `unknown category "${category}"; one of: ${allowed.join(', ')}`, { category, allowed });
  }
}

function defaultCategory(ctx: AppContext): string {
  const allowed = ctx.config.marketplace.categories;
  if (allowed.includes('other')) return 'other';
  throw new AgwError('INVALID_CATEGORY', `category is required; one of: ${allowed.join(', ')}`, { allowed });
}

/** Stores each file's bytes once (content-addressed); bytes already stored are not read again. */
async function storeBlobs(q: Queryable, files: readonly StagedFile[]): Promise<void> {
  const seen = new Set<string>();
  for (const f of files) {
    if (seen.has(f.sha256)) continue;
    seen.add(f.sha256);
    if (!(await hasBlob(q, f.sha256))) await putBlob(q, f.sha256, await stagedBytes(f));
  }
}

export function bundleError(problems: Problem[], warnings: Problem[] = []): AgwError {
  const code = bundleErrorCode(problems);
  const first = problems[0];
  const message =
    code === 'MISSING_SKILL_MD'
      ? 'the bundle has no SKILL.md at its root'
      : `the bundle is invalid (${problems.length} problem${problems.length === 1 ? '' : 's'}; first: ${first.path}: ${first.message})`;
  return new AgwError(code, message, { problems, warnings });
}
