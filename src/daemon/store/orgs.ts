import type { Queryable } from './db.js';
import { newId } from '../../shared/ids.js';

export interface OrgRow {
  id: string;
  name: string;
  tier: string;
  active: number;
  created_at: number;
}

export async function createOrg(q: Queryable, o: { name: string; tier: string }): Promise<OrgRow> {
  const row: OrgRow = { id: newId('org'), name: o.name, tier: o.tier, active: 1, created_at: Date.now() };
  await q.run('INSERT INTO organizations (id, name, tier, active, created_at) VALUES (?, ?, ?, ?, ?)', [
    row.id,
    row.name,
    row.tier,
    row.active,
    row.created_at,
  ]);
  return row;
}

export function orgById(q: Queryable, id: string): Promise<OrgRow | undefined> {
  return q.get<OrgRow>('SELECT * FROM organizations WHERE id = ?', [id]);
}

export async function addOrgMember(q: Queryable, orgId: string, userId: string): Promise<void> {
  await q.run(
    'INSERT INTO org_members (org_id, user_id, role, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (org_id, user_id) DO NOTHING',
    [orgId, userId, 'member', Date.now()],
  );
}

export async function setOrgActive(q: Queryable, orgId: string, active: boolean): Promise<void> {
  await q.run('UPDATE organizations SET active = ? WHERE id = ?', [active ? 1 : 0, orgId]);
}
