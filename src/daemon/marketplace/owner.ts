import { AgwError } from '../../shared/errors.js';
import { nanoToUsd, usdToNano } from '../../shared/money.js';
import type { MySkillsT, OwnerVersionsT, PatchSkillBodyT, TimeseriesT } from '../../shared/schemas/skills.js';
import type { AppContext } from '../context/index.js';
import type { Db, Queryable } from '../store/db.js';
import { DAY_MS, installersByVersion, ownerDaily, ownerTotals } from '../store/skill-installs.js';
import {
  currentOf, displayNames, getVersion, listVersions, lockSkill, moveVersions, setVersionNotes, setVersionStatus, skillById, skillsOfOwner, updateSkill,
  type SkillRow, type VersionRow,
} from '../store/skills.js';
import { ownedSkill } from './access.js';
import { checkCategory } from './publish.js';
import { ownerVersionsView, skillView } from './views.js';
import { sealsOfSkill } from './trust/seal.js';

/**
 * The owner's side of the lifecycle. A skill's status hides or shows the whole skill and
 * leaves its versions alone (archived skills stay installable, at their current version, for
 * earlier installers), except that publishing a skill with no published version publishes
 * its drafts. One version is withdrawn by archiving it (archiveVersion) and published again
 * by republishing it. The owner may also choose the current version (`currentVersion`; null
 * hands it back to the rule: the highest published release, shared/skill-versions.ts).
 */
export async function patchSkill(ctx: AppContext, userId: string, id: number, body: PatchSkillBodyT): Promise<SkillRow> {
  if (body.category !== undefined) checkCategory(ctx, body.category);
  return ctx.db.tx(async (q) => {
    await lockSkill(q, id);
    const skill = await ownedSkill(q, await skillById(q, id), userId, id);
    if (body.status === 'published' && skill.status !== 'published') {
      const published = (await listVersions(q, id)).some((v) => v.status === 'published');
      if (!published) await moveVersions(q, id, 'draft', 'published');
    }
    if (body.currentVersion) await publishedVersion(q, skill, body.currentVersion);
    const pinned = body.currentVersion === undefined ? skill.pinned_version : body.currentVersion;
    await updateSkill(
      q,
      id,
      {
        name: body.name,
        description: body.description,
        category: body.category,
        priceNusd: body.price === undefined ? undefined : usdToNano(body.price),
        status: body.status,
        pinnedVersion: body.currentVersion,
        currentVersion: await currentOf(q, id, pinned),
      },
      Date.now(),
    );
    return (await skillById(q, id))!;
  });
}

/** A version the owner may make current: it exists (404) and is published (409 VERSION_NOT_PUBLISHED). */
async function publishedVersion(q: Queryable, skill: SkillRow, version: string): Promise<void> {
  const v = await ownedVersion(q, Number(skill.id), version);
  if (v.status !== 'published') {
    throw new AgwError('VERSION_NOT_PUBLISHED', `version ${version} of "${skill.slug}" is ${v.status}: only a published version can be current`, {
      version,
      status: v.status,
    });
  }
}

export async function republishVersion(ctx: AppContext, userId: string, id: number, version: string): Promise<SkillRow> {
  return ctx.db.tx(async (q) => {
    await lockSkill(q, id);
    const skill = await ownedSkill(q, await skillById(q, id), userId, id);
    await ownedVersion(q, id, version);
    await setVersionStatus(q, id, version, 'published');
    await updateSkill(q, id, { status: 'published', currentVersion: await currentOf(q, id, skill.pinned_version) }, Date.now());
    return (await skillById(q, id))!;
  });
}

/**
 * Withdraws one version: not installable by accounts that never installed it, never current
 * (a pin on it is dropped). The last published version cannot go this way (409
 * LAST_PUBLISHED_VERSION): archive the skill instead. Archiving an archived version changes nothing.
 */
export async function archiveVersion(ctx: AppContext, userId: string, id: number, version: string): Promise<SkillRow> {
  return ctx.db.tx(async (q) => {
    await lockSkill(q, id);
    const skill = await ownedSkill(q, await skillById(q, id), userId, id);
    const v = await ownedVersion(q, id, version);
    if (v.status === 'archived') return skill;
    const others = (await listVersions(q, id)).filter((x) => x.status === 'published' && x.version !== version);
    if (v.status === 'published' && others.length === 0) {
      throw new AgwError(
        'LAST_PUBLISHED_VERSION',
        `version ${version} is the only published version of "${skill.slug}": archive the skill instead (PATCH /api/skills/${id} {"status":"archived"}, agw skill status ${skill.slug} archive)`,
        { version },
      );
    }
    await setVersionStatus(q, id, version, 'archived');
    const pinned = skill.pinned_version === version ? null : skill.pinned_version;
    await updateSkill(q, id, { pinnedVersion: pinned, currentVersion: await currentOf(q, id, pinned) }, Date.now());
    return (await skillById(q, id))!;
  });
}

export async function editNotes(ctx: AppContext, userId: string, id: number, version: string, notes: string): Promise<SkillRow> {
  return ctx.db.tx(async (q) => {
    await ownedSkill(q, await skillById(q, id), userId, id);
    await ownedVersion(q, id, version);
    const now = Date.now();
    await setVersionNotes(q, id, version, notes, userId, now);
    await updateSkill(q, id, {}, now);
    return (await skillById(q, id))!;
  });
}

export async function ownedVersion(q: Queryable, id: number, version: string): Promise<VersionRow> {
  const v = await getVersion(q, id, version);
  if (!v) throw new AgwError('VERSION_NOT_FOUND', `skill ${id} has no version "${version}"`);
  return v;
}

/** Every version of an owned skill (drafts included) with status, installers and notes' editor. */
export async function ownerVersions(q: Db, skill: SkillRow): Promise<OwnerVersionsT> {
  const versions = await listVersions(q, Number(skill.id));
  const names = await displayNames(q, versions.flatMap((v) => (v.notes_updated_by ? [v.notes_updated_by] : [])));
  const installers = await installersByVersion(q, Number(skill.id));
  const seals = await sealsOfSkill(q, Number(skill.id));
  return ownerVersionsView(skill, versions, { current: skill.current_version, installers, names, seals });
}

export async function mySkills(ctx: AppContext, userId: string): Promise<MySkillsT> {
  const [rows, totals] = await Promise.all([skillsOfOwner(ctx.db, userId), ownerTotals(ctx.db, userId)]);
  return {
    items: rows.map((r) => {
      const t = totals.get(Number(r.id));
      return { ...skillView(r), revenue: nanoToUsd(t?.revenueNusd ?? 0), installs: t?.installs ?? 0 };
    }),
  };
}

/** One entry per UTC day, oldest first, ending today; days without installs are zero. */
export async function timeseries(ctx: AppContext, userId: string, days: number, now = Date.now()): Promise<TimeseriesT> {
  const today = new Date(now);
  const since = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - (days - 1) * DAY_MS;
  const series = Array.from({ length: days }, (_, i) => ({
    date: new Date(since + i * DAY_MS).toISOString().slice(0, 10),
    installs: 0,
    revenue: 0,
  }));
  for (const row of await ownerDaily(ctx.db, userId, since)) {
    const entry = series[row.day];
    if (!entry) continue;
    entry.installs = row.installs;
    entry.revenue = nanoToUsd(row.revenueNusd);
  }
  return { days, series };
}
