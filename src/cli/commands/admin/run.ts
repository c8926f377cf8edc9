import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../shared/config/resolve.js';
import { USAGE_TYPES, type UsageType } from '../../../shared/providers/types.js';
import { usdToNano, nanoToUsd } from '../../../shared/money.js';
import { newId } from '../../../shared/ids.js';
import type { Db } from '../../../daemon/store/db.js';
import { createUser, findUser, listUsers, setUserTier, userByEmail, type UserRow } from '../../../daemon/store/users.js';
import { addOrgMember, createOrg, orgById, setOrgActive } from '../../../daemon/store/orgs.js';
import { credit, setUnlimited } from '../../../daemon/money/wallets.js';
import { setQuotaOverride } from '../../../daemon/store/quota-overrides.js';
import { addProjectMember, createProject, projectByUid } from '../../../daemon/store/projects.js';
import { hashPassword } from '../../../daemon/auth/password.js';
import { CliError, UsageError } from '../../errors.js';
import { formatUsd } from '../../../shared/format.js';
import { withStore, type Opts } from './store.js';

export async function mustUser(db: Db, ref: string): Promise<UserRow> {
  const u = await findUser(db, ref);
  if (!u) throw new CliError(`no user ${ref}`, 'list users in the portal or create one: agw admin user create --email E', 'USER_NOT_FOUND');
  return u;
}

function mustTier(config: ResolvedConfig, tier: string): void {
  if (!config.tiers.has(tier)) throw new UsageError(`unknown tier ${tier}`, `tiers: ${[...config.tiers.keys()].join(', ')}`);
}

function bool(v: string, name: string): boolean {
  if (v === 'true') return true;
  if (v === 'false') return false;
  throw new UsageError(`${name} must be true or false, got ${v}`);
}

function amount(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0 || n > 1_000_000) throw new UsageError(`AMOUNT must be a positive number of USD, got ${v}`);
  return n;
}

export const actions = {
  /** A new current signing key; a running daemon signs with it at once (it re-reads the store). */
  oauthRotateKeys: (_a: string[], o: Opts) =>
    withStore(o, async (db) => (await import('../../../daemon/oauth/keys.js')).rotateSigningKey(db)),
  /** A new current skill signing key; versions signed with the old one still verify (it stays published). */
  skillRotateKeys: (_a: string[], o: Opts) =>
    withStore(o, async (db) => (await import('../../../daemon/marketplace/trust/keys.js')).rotateSkillKey(db)),
  /** Opening the store migrates it; this reports what that applied. */
  migrate: (_a: string[], o: Opts) => withStore(o, async (_db, _config, report) => ({ ...report }), 'create'),
  userCreate: (_a: string[], o: Opts) =>
    withStore(o, async (db, config) => {
      const tier = String(o.tier ?? 'free');
      mustTier(config, tier);
      const email = String(o.email);
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError(`not an email address: ${email}`);
      if (await userByEmail(db, email)) throw new CliError(`a user with email ${email} exists`, undefined, 'USER_EXISTS');
      const password = typeof o.password === 'string' ? o.password : randomBytes(12).toString('base64url');
      const passwordHash = await hashPassword(password);
      const u = await db.tx((q) => createUser(q, { email, name: (o.name as string) ?? null, tier, passwordHash }));
      return { id: u.id, email: u.email, tier: u.tier, password };
    }, 'create'),
  /** Every user, oldest first (never a password hash). */
  userList: (_a: string[], o: Opts) =>
    withStore(o, async (db) => ({
      items: (await listUsers(db)).map((u) => ({ id: u.id, email: u.email, name: u.name, tier: u.tier, createdAt: new Date(Number(u.created_at)).toISOString() })),
    })),
  userSetTier: ([ref, tier]: string[], o: Opts) =>
    withStore(o, async (db, config) => {
      mustTier(config, tier);
      const u = await mustUser(db, ref);
      await setUserTier(db, u.id, tier);
      return { id: u.id, tier };
    }),
  orgCreate: (_a: string[], o: Opts) =>
    withStore(o, async (db, config) => {
      mustTier(config, String(o.tier));
      const org = await createOrg(db, { name: String(o.name), tier: String(o.tier) });
      return { id: org.id, name: org.name, tier: org.tier, active: true };
    }),
  orgAddMember: ([orgId, ref]: string[], o: Opts) =>
    withStore(o, async (db) => {
      if (!(await orgById(db, orgId))) throw new CliError(`no organization ${orgId}`, undefined, 'ORG_NOT_FOUND');
      const u = await mustUser(db, ref);
      await addOrgMember(db, orgId, u.id);
      return { orgId, userId: u.id };
    }),
  orgSetActive: ([orgId, active]: string[], o: Opts) =>
    withStore(o, async (db) => {
      const on = bool(active, 'ACTIVE');
      if (!(await orgById(db, orgId))) throw new CliError(`no organization ${orgId}`, undefined, 'ORG_NOT_FOUND');
      await setOrgActive(db, orgId, on);
      return { id: orgId, active: on };
    }),
  walletCredit: ([ref, amt]: string[], o: Opts) =>
    withStore(o, async (db) => {
      const usd = amount(amt);
      const u = await mustUser(db, ref);
      const r = await db.tx((q) =>
        credit(q, { userId: u.id, amount: usdToNano(usd), type: 'credit', description: (o.note as string) ?? 'admin credit' }),
      );
      return { balance: nanoToUsd(r.balanceAfter), currency: 'USD' };
    }, 'refuse', (r) => process.stdout.write(`credited ${formatUsd(amount(amt))} to ${ref}: balance ${formatUsd(r.balance)}\n`)),
  walletSetUnlimited: ([ref, v]: string[], o: Opts) =>
    withStore(o, async (db) => {
      const on = bool(v, 'UNLIMITED');
      const u = await mustUser(db, ref);
      await setUnlimited(db, u.id, on);
      return { unlimited: on };
    }),
  quotaSet: ([ref, usageType, limit]: string[], o: Opts) =>
    withStore(o, async (db) => {
      if (!USAGE_TYPES.includes(usageType as UsageType))
        throw new UsageError(`unknown usage type ${usageType}`, `one of: ${USAGE_TYPES.join(', ')}`);
      const n = Number(limit);
      if (!Number.isInteger(n) || n < -1) throw new UsageError(`LIMIT must be an integer >= -1, got ${limit}`);
      const u = await mustUser(db, ref);
      await setQuotaOverride(db, u.id, usageType, n);
      return { usageType, limit: n };
    }),
  projectCreate: ([ref]: string[], o: Opts) =>
    withStore(o, async (db) => {
      const u = await mustUser(db, ref);
      const p = await db.tx((q) => createProject(q, u.id, String(o.name)));
      return { uid: p.uid, name: p.name };
    }),
  projectAddMember: ([uid, ref]: string[], o: Opts) =>
    withStore(o, async (db) => {
      if (!(await projectByUid(db, uid))) throw new CliError(`no project ${uid}`, undefined, 'PROJECT_NOT_FOUND');
      const u = await mustUser(db, ref);
      await addProjectMember(db, uid, u.id);
      return { uid, userId: u.id };
    }),
  oauthClientCreate: (_a: string[], o: Opts) =>
    withStore(o, async (db) => {
      const uris = (o.redirectUri as string[]) ?? [];
      for (const uri of uris) {
        let ok = false;
        try {
          const u = new URL(uri);
          ok = (u.protocol === 'https:' || u.protocol === 'http:') && !u.hash;
        } catch {
          ok = false;
        }
        if (!ok) throw new UsageError(`--redirect-uri must be an absolute http(s) URL without fragment, got ${uri}`);
      }
      const clientId = newId('cli');
      await db.run('INSERT INTO oauth_clients (client_id, name, redirect_uris, trusted, created_at) VALUES (?, ?, ?, ?, ?)', [
        clientId,
        String(o.name),
        JSON.stringify(uris),
        o.trusted ? 1 : 0,
        Date.now(),
      ]);
      return { clientId };
    }),
};
