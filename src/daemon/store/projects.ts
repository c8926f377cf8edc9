import type { Queryable } from './db.js';
import { newId } from '../../shared/ids.js';

export interface ProjectRow {
  uid: string;
  name: string;
  owner_id: string;
  created_at: number;
}

export async function createProject(q: Queryable, ownerId: string, name: string): Promise<ProjectRow> {
  const row: ProjectRow = { uid: newId('prj'), name, owner_id: ownerId, created_at: Date.now() };
  await q.run('INSERT INTO projects (uid, name, owner_id, created_at) VALUES (?, ?, ?, ?)', [
    row.uid,
    row.name,
    row.owner_id,
    row.created_at,
  ]);
  await addProjectMember(q, row.uid, ownerId, 'owner');
  return row;
}

export function projectByUid(q: Queryable, uid: string): Promise<ProjectRow | undefined> {
  return q.get<ProjectRow>('SELECT * FROM projects WHERE uid = ?', [uid]);
}

export async function addProjectMember(q: Queryable, uid: string, userId: string, role = 'member'): Promise<void> {
  await q.run(
    'INSERT INTO project_roles (project_uid, user_id, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (project_uid, user_id) DO NOTHING',
    [uid, userId, role, Date.now()],
  );
}

/** The project if `userId` has a role on it. */
export function projectForMember(q: Queryable, uid: string, userId: string): Promise<ProjectRow | undefined> {
  return q.get<ProjectRow>(
    'SELECT p.* FROM projects p JOIN project_roles r ON r.project_uid = p.uid WHERE p.uid = ? AND r.user_id = ?',
    [uid, userId],
  );
}

export function projectsOfUser(q: Queryable, userId: string): Promise<(ProjectRow & { role: string })[]> {
  return q.all(
    'SELECT p.*, r.role AS role FROM projects p JOIN project_roles r ON r.project_uid = p.uid WHERE r.user_id = ? ORDER BY p.created_at',
    [userId],
  );
}
