import type { PublicVersionsT } from '../../shared/schemas/skills.js';
import { getBlob } from '../store/blobs.js';
import type { Db, Queryable } from '../store/db.js';
import { installersByVersion } from '../store/skill-installs.js';
import { isToolManifestPath } from '../../shared/bundle/index.js';
import { displayNames, getVersion, listVersions, parseManifest, type ManifestEntry } from '../store/skills.js';
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
  /** The version's files (path order) with their sizes. */
  files: ManifestEntry[];
  /** The tools its `tools/*.json` manifests declare (validated at publish). */
  tools: { path: string; name: string; description: string }[];
}

const README = /^readme(?:\.md|\.markdown)?$/i;
const utf8 = new TextDecoder('utf-8', { fatal: false });

/** A manifest's name and description; null when it cannot be read as one (never fails the page). */
function toolOf(path: string, text: string | null): SkillDocs['tools'][number] | null {
  try {
    const m = JSON.parse(text ?? '') as { name?: unknown; description?: unknown };
    return typeof m.name === 'string' ? { path, name: m.name, description: typeof m.description === 'string' ? m.description : '' } : null;
  } catch {
    return null;
  }
}

/** What the skill page shows of the current version: SKILL.md, the README, the files and the tools, read from its stored files (blobs). */
export async function currentDocs(q: Queryable, access: SkillAccess): Promise<SkillDocs> {
  const version = access.skill.current_version;
  const row = version === null ? undefined : await getVersion(q, Number(access.skill.id), version);
  if (!row) return { version, skillMd: null, readme: null, files: [], tools: [] };
  const files = parseManifest(row);
  const read = async (path: string | undefined) => {
    const f = path === undefined ? undefined : files.find((x) => x.path === path);
    const data = f ? await getBlob(q, f.sha256) : undefined;
    return data ? utf8.decode(data) : null;
  };
  const readmePath = files.filter((f) => README.test(f.path)).map((f) => f.path).sort()[0];
  const tools = [];
  for (const f of files.filter((x) => isToolManifestPath(x.path))) {
    const tool = toolOf(f.path, await read(f.path));
    if (tool) tools.push(tool);
  }
  return { version, skillMd: await read('SKILL.md'), readme: await read(readmePath), files, tools };
}
