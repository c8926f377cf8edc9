import { AgwError } from '../../shared/errors.js';
import { nanoToUsd } from '../../shared/money.js';
import type { InstallResultT } from '../../shared/schemas/skills.js';

/** The install answer before the version's seal is added (routes/skills-install.ts). */
export type Installed = Omit<InstallResultT, 'digest' | 'signature'>;
import type { AppContext } from '../context/index.js';
import type { Queryable } from '../store/db.js';
import { bumpInstallCount, insertInstall, installOf, installedVersion, recordVersionInstall, setInstalledVersion } from '../store/skill-installs.js';
import { getVersion, skillById, type SkillRow } from '../store/skills.js';
import { credit, debit, getWalletRow } from '../money/wallets.js';
import { allowanceNano, loadWalletState } from '../money/wallet-view.js';
import { tierOf } from '../money/calls.js';
import type { Refusal } from '../money/engine.js';
import { usdText } from '../money/hold.js';
import { moneyOf } from '../money/index.js';
import { notFound } from './access.js';

/**
 * Installs the current version (or `wanted`) into the caller's account, in one transaction: the install
 * row (its primary key makes the first install win), the buyer's debit (allowance first,
 * then balance; 402 rolls everything back) and the owner's credit of price x (1 - fee).
 * Repeat installs are free and move the account to the current version. Owners install
 * their own skills free of charge. A paid first install takes part in the gateway's
 * admission: its price is held against the calls in flight first (money engine
 * `reserveFunds`), so a chat burst and an install cannot together overdraw the wallet.
 * Every version an account installs is noted (skill_version_installs): a version its owner
 * archived stays installable for those accounts only (403 VERSION_ARCHIVED for others).
 */
export async function installSkill(ctx: AppContext, user: { userId: string; tier: string }, skillId: number, wanted?: string): Promise<Installed> {
  for (let attempt = 0; ; attempt++) {
    const price = await firstInstallPrice(ctx.db, user.userId, skillId);
    let release = () => {};
    if (price > 0) {
      const r = await (await moneyOf(ctx)).reserveFunds(user.userId, tierOf(ctx.config, user.tier), price, Date.now());
      if ('refusal' in r) {
        const skill = await skillById(ctx.db, skillId);
        throw r.refusal.kind === 'funds' ? priceNotCovered(skill?.slug ?? String(skillId), price, r.refusal) : notFound(skillId);
      }
      release = r.release;
    }
    try {
      return await ctx.db.tx((q) => install(ctx, q, user, skillId, price, wanted));
    } catch (e) {
      if (e !== PRICE_CHANGED || attempt >= 2) throw e;
    } finally {
      release();
    }
  }
}

/** The install transaction found another price than the one reserved (the owner changed it): start over. */
const PRICE_CHANGED = new Error('the skill price changed during the install');

/** What a first install of the skill would cost the user (0: free, owned, already installed, or unknown). */
async function firstInstallPrice(q: Queryable, userId: string, skillId: number): Promise<number> {
  const skill = await skillById(q, skillId);
  if (!skill || skill.owner_id === userId || (await installOf(q, skillId, userId))) return 0;
  return Number(skill.price_nusd);
}

async function install(ctx: AppContext, q: Queryable, user: { userId: string; tier: string }, skillId: number, reserved: number, wanted?: string): Promise<Installed> {
  const skill = await skillById(q, skillId);
  const isOwner = skill?.owner_id === user.userId;
  if (!skill || (skill.status === 'draft' && !isOwner)) throw notFound(skillId);
  const earlier = await installOf(q, skillId, user.userId);
  if (skill.status === 'archived' && !isOwner && !earlier) {
    throw new AgwError('SKILL_ARCHIVED', `skill "${skill.slug}" is archived: only accounts that installed it before can install it`);
  }
  const version = wanted ?? skill.current_version;
  if (!version) throw new AgwError('VERSION_NOT_FOUND', `skill "${skill.slug}" has no version to install`);
  if (wanted !== undefined) await assertInstallable(q, skill, user.userId, wanted, isOwner);
  const now = Date.now();
  await recordVersionInstall(q, skillId, user.userId, version, now);
  const repeat = { skillId, version, charged: 0, alreadyInstalled: true };
  if (earlier) {
    await setInstalledVersion(q, skillId, user.userId, version);
    return repeat;
  }
  const price = isOwner ? 0 : Number(skill.price_nusd);
  if (price > reserved) throw PRICE_CHANGED;
  const ownerCredit = Math.round(price * (1 - ctx.config.marketplace.platformFee));
  const first = await insertInstall(q, {
    skill_id: skillId,
    user_id: user.userId,
    version,
    charged_nusd: price,
    owner_credit_nusd: ownerCredit,
    created_at: now,
  });
  if (!first) return repeat; // another daemon's install of the same account won
  if (price > 0) await charge(ctx, q, user, { skill, version, price, ownerCredit });
  await bumpInstallCount(q, skillId);
  return { skillId, version, charged: nanoToUsd(price), alreadyInstalled: false };
}

/**
 * A version an account may install or download: it exists (a draft only for the owner) and,
 * when its owner archived it, the account is the owner or installed it before.
 */
export async function assertInstallable(q: Queryable, skill: SkillRow, userId: string, version: string, isOwner: boolean): Promise<void> {
  const v = await getVersion(q, Number(skill.id), version);
  if (!v || (v.status === 'draft' && !isOwner)) throw new AgwError('VERSION_NOT_FOUND', `skill "${skill.slug}" has no version "${version}"`);
  if (v.status === 'archived' && !isOwner && !(await installedVersion(q, Number(skill.id), userId, version))) throw versionArchived(skill, version);
}

/** 403 VERSION_ARCHIVED: the version was withdrawn; its details name the current one. */
export function versionArchived(skill: SkillRow, version: string): AgwError {
  return new AgwError('VERSION_ARCHIVED', `version ${version} of "${skill.slug}" was withdrawn by its owner: only accounts that installed it before can install it`, {
    version,
    currentVersion: skill.current_version,
  });
}

/** 402 for a price that allowance left + balance − holds of calls in flight do not cover. */
function priceNotCovered(slug: string, price: number, r: Extract<Refusal, { kind: 'funds' }>): AgwError {
  const w = r.wallet;
  const available = Math.max(0, w.allowanceRemaining + w.balance - r.held);
  const inFlight = r.held > 0 ? ` (calls in flight hold ${usdText(r.held)})` : '';
  return new AgwError('INSUFFICIENT_FUNDS', `skill "${slug}" costs ${usdText(price)} and ${usdText(available)} is available${inFlight}: top up your wallet`, {
    balance: nanoToUsd(w.balance),
    currency: w.currency,
    monthlyAllowance: nanoToUsd(w.allowance),
    monthlyAllowanceRemaining: nanoToUsd(w.allowanceRemaining),
    held: nanoToUsd(r.held),
    available: nanoToUsd(available),
    required: nanoToUsd(price),
    price: nanoToUsd(price),
  });
}

interface Sale {
  skill: SkillRow;
  version: string;
  price: number;
  ownerCredit: number;
}

async function charge(ctx: AppContext, q: Queryable, user: { userId: string; tier: string }, sale: Sale): Promise<void> {
  const { skill, version, price, ownerCredit } = sale;
  const skillId = Number(skill.id);
  const label = `${skill.slug}@${version}`;
  // both wallets locked in one order (user id), as booking batches lock them: never a cycle
  if (q.dialect === 'postgres') await q.all('SELECT user_id FROM wallets WHERE user_id IN (?, ?) ORDER BY user_id COLLATE "C" FOR UPDATE', [user.userId, skill.owner_id]);
  const paid = await debit(q, {
    userId: user.userId,
    amount: price,
    monthlyAllowance: allowanceNano(ctx, user.tier),
    type: 'skill_purchase',
    skillId,
    description: `skill ${label}`,
    requireCover: true,
  });
  if (!paid) {
    // what daemons hold in slices for calls (PostgreSQL) is not spendable here either
    const row = await getWalletRow(q, user.userId);
    const w = await loadWalletState(ctx, q, user.userId, user.tier);
    throw priceNotCovered(skill.slug, price, { kind: 'funds', wallet: w, held: Number(row?.leased_nusd ?? 0) });
  }
  if (ownerCredit > 0) {
    await credit(q, { userId: skill.owner_id, amount: ownerCredit, type: 'skill_revenue', skillId, description: `sale of ${label}` });
  }
}
