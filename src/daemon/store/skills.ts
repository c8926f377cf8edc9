import { pickCurrent } from '../../shared/skill-versions.js';
import { forUpdate, type Queryable } from './db.js';

/**
 * Skills and their versions. A skill row carries the marketplace metadata; each version
 * row carries its manifest (JSON list of {path, size, sha256}; the bytes live in `blobs`).
 */
export type SkillStatus = 'draft' | 'published' | 'archived';

export interface SkillRow {
  id: number;
  slug: string;
  name: string;
  description: string;
  category: string;
  price_nusd: number;
  status: SkillStatus;
  current_version: string | null;
  /** The version the owner made current (migration 18); null: the rule decides. */
  pinned_version: string | null;
  owner_id: string;
  install_count: number;
  created_at: number;
  updated_at: number;
  /** From the owner's user row (joined). */
  owner_name: string | null;
  owner_email: string;
}

export interface VersionRow {
  skill_id: number;
  version: string;
  status: SkillStatus;
  notes: string;
  notes_updated_at: number | null;
  notes_updated_by: string | null;
  manifest: string;
  published_at: number;
}

export interface ManifestEntry {
  path: string;
  size: number;
  sha256: string;
}

const SELECT_SKILL = `SELECT s.*, u.name AS owner_name, u.email AS owner_email FROM skills s JOIN users u ON u.id = s.owner_id`;

export function skillById(q: Queryable, id: number): Promise<SkillRow | undefined> {
  return q.get<SkillRow>(`${SELECT_SKILL} WHERE s.id = ?`, [id]);
}

export function skillBySlug(q: Queryable, slug: string): Promise<SkillRow | undefined> {
  return q.get<SkillRow>(`${SELECT_SKILL} WHERE s.slug = ?`, [slug]);
}

/**
 * Locks a skill's row until the transaction ends (PostgreSQL; SQLite transactions already
 * exclude other writers), so version changes and the current version computed from them
 * do not interleave with another daemon's.
 */
export async function lockSkill(q: Queryable, id: number): Promise<void> {
  await q.get(`SELECT id FROM skills WHERE id = ?${forUpdate(q)}`, [id]);
}

/** Every skill of one owner, any status, newest first. */
export function skillsOfOwner(q: Queryable, ownerId: string): Promise<SkillRow[]> {
  return q.all<SkillRow>(`${SELECT_SKILL} WHERE s.owner_id = ? ORDER BY s.id DESC`, [ownerId]);
}

export interface NewSkill {
  slug: string;
  name: string;
  description: string;
  category: string;
  priceNusd: number;
  status: SkillStatus;
  ownerId: string;
  now: number;
}

/** Claims a slug atomically: the new id, or undefined when the slug already exists. */
export async function claimSlug(q: Queryable, s: NewSkill): Promise<number | undefined> {
  const row = await q.get<{ id: number }>(
    `INSERT INTO skills (slug, name, description, category, price_nusd, status, owner_id, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (slug) DO NOTHING RETURNING id`,
    [s.slug, s.name, s.description, s.category, s.priceNusd, s.status, s.ownerId, s.now, s.now],
  );
  return row ? Number(row.id) : undefined;
}

export interface SkillPatch {
  name?: string;
  description?: string;
  category?: string;
  priceNusd?: number;
  status?: SkillStatus;
  currentVersion?: string | null;
  pinnedVersion?: string | null;
}

const PATCH_COLUMNS: Record<keyof SkillPatch, string> = {
  name: 'name',
  description: 'description',
  category: 'category',
  priceNusd: 'price_nusd',
  status: 'status',
  currentVersion: 'current_version',
  pinnedVersion: 'pinned_version',
};

/** Updates the given columns and updated_at. */
export async function updateSkill(q: Queryable, id: number, patch: SkillPatch, now: number): Promise<void> {
  const sets: string[] = [];
  const params: (string | number | null)[] = [];
  for (const [key, column] of Object.entries(PATCH_COLUMNS) as [keyof SkillPatch, string][]) {
    if (patch[key] === undefined) continue;
    sets.push(`${column} = ?`);
    params.push(patch[key] as string | number | null);
  }
  sets.push('updated_at = ?');
  await q.run(`UPDATE skills SET ${sets.join(', ')} WHERE id = ?`, [...params, now, id]);
}

/** The current version by the rule (shared/skill-versions.ts) and the owner's pin, from the stored versions. */
export async function currentOf(q: Queryable, skillId: number, pinned: string | null): Promise<string | null> {
  return pickCurrent(await listVersions(q, skillId), pinned);
}

/** Migration 18: every skill's current version again, by the rule in force (prereleases never over a release). */
export async function recomputeCurrentVersions(q: Queryable): Promise<void> {
  const skills = await q.all<{ id: number; current_version: string | null; pinned_version: string | null }>(
    'SELECT id, current_version, pinned_version FROM skills',
  );
  for (const s of skills) {
    const current = await currentOf(q, Number(s.id), s.pinned_version);
    if (current !== s.current_version) await q.run('UPDATE skills SET current_version = ? WHERE id = ?', [current, s.id]);
  }
}

export function listVersions(q: Queryable, skillId: number): Promise<VersionRow[]> {
  return q.all<VersionRow>('SELECT * FROM skill_versions WHERE skill_id = ?', [skillId]);
}

export function getVersion(q: Queryable, skillId: number, version: string): Promise<VersionRow | undefined> {
  return q.get<VersionRow>('SELECT * FROM skill_versions WHERE skill_id = ? AND version = ?', [skillId, version]);
}

export interface NewVersion {
  skillId: number;
  version: string;
  status: SkillStatus;
  notes: string | undefined;
  manifest: ManifestEntry[];
  now: number;
}

/** Inserts a version or, when it exists, replaces its files (and notes when given). */
export async function upsertVersion(q: Queryable, v: NewVersion): Promise<void> {
  await q.run(
    `INSERT INTO skill_versions (skill_id, version, status, notes, manifest, published_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (skill_id, version) DO UPDATE SET status = excluded.status, manifest = excluded.manifest,
       published_at = excluded.published_at, notes = CASE WHEN ? = 1 THEN excluded.notes ELSE skill_versions.notes END`,
    [v.skillId, v.version, v.status, v.notes ?? '', JSON.stringify(v.manifest), v.now, v.notes === undefined ? 0 : 1],
  );
}

export async function setVersionStatus(q: Queryable, skillId: number, version: string, status: SkillStatus): Promise<void> {
  await q.run('UPDATE skill_versions SET status = ? WHERE skill_id = ? AND version = ?', [status, skillId, version]);
}

/** Moves every version of a skill in status `from` to `to`; returns how many moved. */
export async function moveVersions(q: Queryable, skillId: number, from: SkillStatus, to: SkillStatus): Promise<number> {
  const r = await q.run('UPDATE skill_versions SET status = ? WHERE skill_id = ? AND status = ?', [to, skillId, from]);
  return r.changes;
}

export async function setVersionNotes(
  q: Queryable,
  skillId: number,
  version: string,
  notes: string,
  byUserId: string,
  now: number,
): Promise<void> {
  await q.run(
    'UPDATE skill_versions SET notes = ?, notes_updated_at = ?, notes_updated_by = ? WHERE skill_id = ? AND version = ?',
    [notes, now, byUserId, skillId, version],
  );
}

export function parseManifest(v: Pick<VersionRow, 'manifest'>): ManifestEntry[] {
  return JSON.parse(v.manifest) as ManifestEntry[];
}

/** Display names of the given users (name, else the part of the email before "@"). */
export async function displayNames(q: Queryable, ids: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const id of new Set(ids)) {
    const u = await q.get<{ name: string | null; email: string }>('SELECT name, email FROM users WHERE id = ?', [id]);
    if (u) out.set(id, displayName(u.name, u.email));
  }
  return out;
}

export function displayName(name: string | null, email: string): string {
  return name && name.trim() ? name : email.split('@')[0];
}
