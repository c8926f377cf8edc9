/** A skill named by id or slug. */
import type { SkillT } from '../../../shared/schemas/skills.js';
import type { Api } from '../../api.js';

export const isId = (ref: string): boolean => /^[1-9]\d{0,15}$/.test(ref);

/** The skill record (GET /skills/{id} or /skills/by-slug/{slug}); owners see their drafts. */
export function getSkill(api: Api, ref: string): Promise<SkillT> {
  return api.get<SkillT>(isId(ref) ? `/skills/${ref}` : `/skills/by-slug/${encodeURIComponent(ref)}`, { auth: 'optional' });
}

/** The numeric id, looking the slug up when needed. */
export async function skillId(api: Api, ref: string): Promise<number> {
  return isId(ref) ? Number(ref) : (await getSkill(api, ref)).id;
}
