import type { Queryable } from './db.js';
import { newId } from '../../shared/ids.js';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  tier: string;
  password_hash: string | null;
  created_at: number;
}

export async function createUser(
  q: Queryable,
  u: { email: string; name?: string | null; tier: string; passwordHash?: string | null },
): Promise<UserRow> {
  const row: UserRow = {
    id: newId('usr'),
    email: u.email,
    name: u.name ?? null,
    tier: u.tier,
    password_hash: u.passwordHash ?? null,
    created_at: Date.now(),
  };
  await q.run('INSERT INTO users (id, email, name, tier, password_hash, created_at) VALUES (?, ?, ?, ?, ?, ?)', [
    row.id,
    row.email,
    row.name,
    row.tier,
    row.password_hash,
    row.created_at,
  ]);
  await q.run('INSERT INTO wallets (user_id, updated_at) VALUES (?, ?)', [row.id, row.created_at]);
  return row;
}

export function userById(q: Queryable, id: string): Promise<UserRow | undefined> {
  return q.get<UserRow>('SELECT * FROM users WHERE id = ?', [id]);
}

export function userByEmail(q: Queryable, email: string): Promise<UserRow | undefined> {
  return q.get<UserRow>('SELECT * FROM users WHERE email = ?', [email]);
}

/** USER on the command line is an id or an email. */
export function findUser(q: Queryable, idOrEmail: string): Promise<UserRow | undefined> {
  return idOrEmail.includes('@') ? userByEmail(q, idOrEmail) : userById(q, idOrEmail);
}

/** Every user, oldest first. */
export function listUsers(q: Queryable): Promise<UserRow[]> {
  return q.all<UserRow>('SELECT * FROM users ORDER BY created_at, id');
}

export async function setUserTier(q: Queryable, id: string, tier: string): Promise<void> {
  await q.run('UPDATE users SET tier = ? WHERE id = ?', [tier, id]);
}

/**
 * The effective tier: an active organization's tier wins over the user's own. With
 * several active organizations the first joined wins.
 */
export async function effectiveTier(q: Queryable, userId: string): Promise<string | undefined> {
  const row = await q.get<{ tier: string; org_tier: string | null }>(
    `SELECT u.tier AS tier,
            (SELECT o.tier FROM org_members m JOIN organizations o ON o.id = m.org_id
              WHERE m.user_id = u.id AND o.active = 1 ORDER BY m.created_at LIMIT 1) AS org_tier
       FROM users u WHERE u.id = ?`,
    [userId],
  );
  return row ? (row.org_tier ?? row.tier) : undefined;
}
