import { AgwError } from '../../shared/errors.js';
import { nanoToUsd } from '../../shared/money.js';
import type { InstallResultT } from '../../shared/schemas/skills.js';
import type { AppContext } from '../context.js';
import type { Queryable } from '../store/db.js';
import { bumpInstallCount, insertInstall, installOf, setInstalledVersion } from '../store/skill-installs.js';
import { skillById, type SkillRow } from '../store/skills.js';
import { credit, debit } from '../money/wallets.js';
import { allowanceNano, loadWalletState } from '../money/wallet-view.js';
import { notFound } from './access.js';

/**
 * Installs the current version into the caller's account, in one transaction: the install
 * row (its primary key makes the first install win), the buyer's debit (allowance first,
 * then balance; 402 rolls everything back) and the owner's credit of price x (1 - fee).
 * Repeat installs are free and move the account to the current version. Owners install
 * their own skills free of charge.
 */
export async function installSkill(ctx: AppContext, user: { userId: string; tier: string }, skillId: number): Promise<InstallResultT> {
  return ctx.db.tx(async (q) => {
    const skill = await skillById(q, skillId);
    const isOwner = skill?.owner_id === user.userId;
    if (!skill || (skill.status === 'draft' && !isOwner)) throw notFound(skillId);
    const earlier = await installOf(q, skillId, user.userId);
    if (skill.status === 'archived' && !isOwner && !earlier) {
      throw new AgwError('SKILL_ARCHIVED', `skill "${skill.slug}" is archived: only accounts that installed it before can install it`);
    }
    const version = skill.current_version;
    if (!version) throw new AgwError('VERSION_NOT_FOUND', `skill "${skill.slug}" has no version to install`);
    const repeat = { skillId, version, charged: 0, alreadyInstalled: true };
    if (earlier) {
      await setInstalledVersion(q, skillId, user.userId, version);
      return repeat;
    }
    const price = isOwner ? 0 : Number(skill.price_nusd);
    const ownerCredit = Math.round(price * (1 - ctx.config.marketplace.platformFee));
    const now = Date.now();
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
    const w = await loadWalletState(ctx, q, user.userId, user.tier);
    throw new AgwError('INSUFFICIENT_FUNDS', `skill "${skill.slug}" costs ${nanoToUsd(price)} USD; top up your wallet`, {
      balance: nanoToUsd(w.balance),
      currency: w.currency,
      monthlyAllowance: nanoToUsd(w.allowance),
      monthlyAllowanceRemaining: nanoToUsd(w.allowanceRemaining),
      price: nanoToUsd(price),
    });
  }
  if (ownerCredit > 0) {
    await credit(q, { userId: skill.owner_id, amount: ownerCredit, type: 'skill_revenue', skillId, description: `sale of ${label}` });
  }
}
