import type { Queryable } from './db.js';

/** Who installed which skill, what it cost and what the owner earned (nano-USD). */
export interface InstallRow {
  skill_id: number;
  user_id: string;
  version: string;
  charged_nusd: number;
  owner_credit_nusd: number;
  created_at: number;
}

export function installOf(q: Queryable, skillId: number, userId: string): Promise<InstallRow | undefined> {
  return q.get<InstallRow>('SELECT * FROM skill_installs WHERE skill_id = ? AND user_id = ?', [skillId, userId]);
}

export async function isInstaller(q: Queryable, skillId: number, userId: string): Promise<boolean> {
  return (await installOf(q, skillId, userId)) !== undefined;
}

/** Records a first install; false when the account already has one (the primary key decides). */
export async function insertInstall(q: Queryable, row: InstallRow): Promise<boolean> {
  const r = await q.run(
    `INSERT INTO skill_installs (skill_id, user_id, version, charged_nusd, owner_credit_nusd, created_at)
     VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (skill_id, user_id) DO NOTHING`,
    [row.skill_id, row.user_id, row.version, row.charged_nusd, row.owner_credit_nusd, row.created_at],
  );
  return r.changes > 0;
}

export async function setInstalledVersion(q: Queryable, skillId: number, userId: string, version: string): Promise<void> {
  await q.run('UPDATE skill_installs SET version = ? WHERE skill_id = ? AND user_id = ?', [version, skillId, userId]);
}

/** Notes that the account installed this version (migration 18); once per account and version. */
export async function recordVersionInstall(q: Queryable, skillId: number, userId: string, version: string, now: number): Promise<void> {
  await q.run(
    `INSERT INTO skill_version_installs (skill_id, user_id, version, created_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (skill_id, user_id, version) DO NOTHING`,
    [skillId, userId, version, now],
  );
}

/** Whether the account ever installed this version (an archived version stays theirs). */
export async function installedVersion(q: Queryable, skillId: number, userId: string, version: string): Promise<boolean> {
  const row = await q.get('SELECT 1 AS x FROM skill_version_installs WHERE skill_id = ? AND user_id = ? AND version = ?', [skillId, userId, version]);
  return row !== undefined;
}

/** First installs of a skill since `since` (epoch ms): its weekly installs with since = now − 7 days. */
export async function installsSince(q: Queryable, skillId: number, since: number): Promise<number> {
  const row = await q.get<{ n: number }>('SELECT COUNT(*) AS n FROM skill_installs WHERE skill_id = ? AND created_at >= ?', [skillId, since]);
  return Number(row?.n ?? 0);
}

export async function bumpInstallCount(q: Queryable, skillId: number): Promise<void> {
  await q.run('UPDATE skills SET install_count = install_count + 1 WHERE id = ?', [skillId]);
}

/** Installer count per version (the version each account last installed). */
export async function installersByVersion(q: Queryable, skillId: number): Promise<Map<string, number>> {
  const rows = await q.all<{ version: string; n: number }>(
    'SELECT version, COUNT(*) AS n FROM skill_installs WHERE skill_id = ? GROUP BY version',
    [skillId],
  );
  return new Map(rows.map((r) => [r.version, Number(r.n)]));
}

/** Per owned skill: installs and the owner's revenue. */
export async function ownerTotals(q: Queryable, ownerId: string): Promise<Map<number, { installs: number; revenueNusd: number }>> {
  const rows = await q.all<{ skill_id: number; n: number; r: number }>(
    `SELECT i.skill_id AS skill_id, COUNT(*) AS n, COALESCE(SUM(i.owner_credit_nusd), 0) AS r
       FROM skill_installs i JOIN skills s ON s.id = i.skill_id WHERE s.owner_id = ? GROUP BY i.skill_id`,
    [ownerId],
  );
  return new Map(rows.map((r) => [Number(r.skill_id), { installs: Number(r.n), revenueNusd: Number(r.r) }]));
}

export const DAY_MS = 86_400_000;

/**
 * Installs and owner revenue per UTC day since `since` (epoch ms of a UTC midnight); `day`
 * counts from `since`. The day number is computed in SQL from the integer column only
 * (integer division on both engines).
 */
export async function ownerDaily(
  q: Queryable,
  ownerId: string,
  since: number,
): Promise<{ day: number; installs: number; revenueNusd: number }[]> {
  const rows = await q.all<{ d: number; n: number; r: number }>(
    `SELECT i.created_at / ${DAY_MS} AS d, COUNT(*) AS n, COALESCE(SUM(i.owner_credit_nusd), 0) AS r
       FROM skill_installs i JOIN skills s ON s.id = i.skill_id
      WHERE s.owner_id = ? AND i.created_at >= ? GROUP BY i.created_at / ${DAY_MS}`,
    [ownerId, since],
  );
  const first = Math.floor(since / DAY_MS);
  return rows.map((r) => ({ day: Number(r.d) - first, installs: Number(r.n), revenueNusd: Number(r.r) }));
}
