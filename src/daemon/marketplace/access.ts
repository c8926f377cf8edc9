import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context/index.js';
import { ACCOUNT_CREDENTIALS, authenticate } from '../auth/principal.js';
import type { Queryable } from '../store/db.js';
import { isInstaller } from '../store/skill-installs.js';
import type { SkillRow } from '../store/skills.js';

/**
 * Who may see a skill: published ones everyone; drafts only the owner; archived ones the
 * owner and accounts that installed the skill before. Anything else reads as 404, so
 * hidden skills are indistinguishable from missing ones.
 */
export interface SkillAccess {
  skill: SkillRow;
  isOwner: boolean;
  isInstaller: boolean;
}

/** The caller's user id when the request carries valid account credentials; public reads never fail on them. */
export async function viewerId(ctx: AppContext, req: FastifyRequest): Promise<string | null> {
  if (!req.headers.authorization && !req.headers.cookie) return null;
  const p = await authenticate(ctx, req, ACCOUNT_CREDENTIALS).catch((e: unknown) => {
    if (e instanceof AgwError && e.code === 'KEY_EXPIRED') return null; // reads as anonymous
    throw e;
  });
  return p && p.kind !== 'master' ? p.userId : null;
}

export function notFound(ref: number | string): AgwError {
  return new AgwError('SKILL_NOT_FOUND', `skill ${typeof ref === 'number' ? ref : `"${ref}"`} not found`);
}

export async function accessOf(q: Queryable, skill: SkillRow, userId: string | null): Promise<SkillAccess> {
  const isOwner = userId !== null && skill.owner_id === userId;
  const installer = userId !== null && !isOwner && (await isInstaller(q, Number(skill.id), userId));
  return { skill, isOwner, isInstaller: isOwner || installer };
}

export function canView(a: SkillAccess): boolean {
  if (a.skill.status === 'published') return true;
  if (a.skill.status === 'archived') return a.isOwner || a.isInstaller;
  return a.isOwner;
}

/** The skill if the caller may see it, else 404 SKILL_NOT_FOUND. */
export async function visibleSkill(q: Queryable, skill: SkillRow | undefined, userId: string | null, ref: number | string): Promise<SkillAccess> {
  if (!skill) throw notFound(ref);
  const a = await accessOf(q, skill, userId);
  if (!canView(a)) throw notFound(ref);
  return a;
}

/** The skill if the caller owns it; 403 NOT_OWNER when they can see but not own it, else 404. */
export async function ownedSkill(q: Queryable, skill: SkillRow | undefined, userId: string, ref: number | string): Promise<SkillRow> {
  const a = await visibleSkill(q, skill, userId, ref);
  if (!a.isOwner) throw new AgwError('NOT_OWNER', `only the owner of skill ${ref} may do this`);
  return a.skill;
}
