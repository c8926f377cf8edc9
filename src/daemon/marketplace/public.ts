import type { PublicVersionsT } from '../../shared/schemas/skills.js';
import { getBlob } from '../store/blobs.js';
import type { Db, Queryable } from '../store/db.js';
import { installersByVersion } from '../store/skill-installs.js';
import { displayNames, getVersion, listVersions, parseManifest } from '../store/skills.js';
import type { SkillAccess } from './access.js';
import { publicVersionsView } from './views.js';
import { sealsOfSkill } from './trust/seal.js';

/**
 * What a visible skill shows its viewer, for the API (GET /api/skills/{id}/public-versions)
 * and the web page /skills/{slug} alike: versions (drafts never; archived ones only for the
 * owner and earlier installers) and the documents of the current version's bundle.
 */
export async function publicVersions(q: Db, access: SkillAccess): Promise<PublicVersionsT> {
  const id = Number(access.skill.id);
  const versions = (await listVersions(q, id)).filter(
    (v) => v.status === 'published' || (v.status === 'archived' && access.isInstaller),
  );
  const names = await displayNames(q, versions.flatMap((v) => (v.notes_updated_by ? [v.notes_updated_by] : [])));
  const installers = await installersByVersion(q, id);
  const seals = await sealsOfSkill(q, id);
  return publicVersionsView(access.skill, versions, { current: access.skill.current_version, installers, names, seals });
}

export interface SkillDocs {
  version: string | null;
  /** SKILL.md as stored (front matter included). */
  skillMd: string | null;
  /** README.md (or README.markdown, README) at the bundle root, any letter case. */
  readme: string | null;
}

const README = /^readme(?:\.md|\.markdown)?$/i;
const utf8 = new TextDecoder('utf-8', { fatal: false });

/** SKILL.md and the README of the skill's current version, read from its stored files (blobs). */
export async function currentDocs(q: Queryable, access: SkillAccess): Promise<SkillDocs> {
  const version = access.skill.current_version;
  const row = version === null ? undefined : await getVersion(q, Number(access.skill.id), version);
  if (!row) return { version, skillMd: null, readme: null };
  const files = parseManifest(row);
  const read = async (path: string | undefined) => {
    const f = path === undefined ? undefined : files.find((x) => x.path === path);
    const data = f ? await getBlob(q, f.sha256) : undefined;
    return data ? utf8.decode(data) : null;
  };
  const readmePath = files.filter((f) => README.test(f.path)).map((f) => f.path).sort()[0];
  return { version, skillMd: await read('SKILL.md'), readme: await read(readmePath) };
}
