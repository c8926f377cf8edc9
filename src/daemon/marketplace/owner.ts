import { AgwError } from '../../shared/errors.js';
import { nanoToUsd, usdToNano } from '../../shared/money.js';
import type { MySkillsT, OwnerVersionsT, PatchSkillBodyT, TimeseriesT } from '../../shared/schemas/skills.js';
import type { AppContext } from '../context/index.js';
import type { Db, Queryable } from '../store/db.js';
import { DAY_MS, installersByVersion, ownerDaily, ownerTotals } from '../store/skill-installs.js';
import {
  displayNames, getVersion, listVersions, lockSkill, moveVersions, setVersionNotes, setVersionStatus, skillById, skillsOfOwner, updateSkill,
  type SkillRow, type SkillStatus, type VersionRow,
} from '../store/skills.js';
import { ownedSkill } from './access.js';
import { checkCategory } from './publish.js';
import { pickCurrent } from './versions.js';
import { ownerVersionsView, skillView } from './views.js';
import { sealsOfSkill } from './trust/seal.js';

/**
 * The owner's side of the lifecycle. A skill's status moves its versions along:
 * archiving archives every published version; publishing again republishes the archived
 * ones and, when no version would be published (a draft skill), its drafts; draft hides
 * the skill and leaves versions alone. Republishing one version (archived or draft)
 * publishes it and makes the skill published.
 */
export async function patchSkill(ctx: AppContext, userId: string, id: number, body: PatchSkillBodyT): Promise<SkillRow> {
  if (body.category !== undefined) checkCategory(ctx, body.category);
  return ctx.db.tx(async (q) => {
    await lockSkill(q, id);
    const skill = await ownedSkill(q, await skillById(q, id), userId, id);
    if (body.status !== undefined && body.status !== skill.status) await cascade(q, id, body.status);
    await updateSkill(
      q,
      id,
      {
        name: body.name,
        description: body.description,
        category: body.category,
        priceNusd: body.price === undefined ? undefined : usdToNano(body.price),
        status: body.status,
        currentVersion: pickCurrent(await listVersions(q, id)),
      },
      Date.now(),
    );
    return (await skillById(q, id))!;
  });
}

async function cascade(q: Queryable, id: number, to: SkillStatus): Promise<void> {
  if (to === 'archived') await moveVersions(q, id, 'published', 'archived');
  if (to === 'published') {
    await moveVersions(q, id, 'archived', 'published');
    const published = (await listVersions(q, id)).some((v) => v.status === 'published');
    if (!published) await moveVersions(q, id, 'draft', 'published');
  }
}

export async function republishVersion(ctx: AppContext, userId: string, id: number, version: string): Promise<SkillRow> {
  return ctx.db.tx(async (q) => {
    await lockSkill(q, id);
    await ownedSkill(q, await skillById(q, id), userId, id);
    await ownedVersion(q, id, version);
    await setVersionStatus(q, id, version, 'published');
    await updateSkill(q, id, { status: 'published', currentVersion: pickCurrent(await listVersions(q, id)) }, Date.now());
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
