import type { AppContext } from '../context/index.js';
import type { Queryable } from '../store/db.js';
import { getWalletRow, walletState, type WalletState, type WalletTxRow } from './wallets.js';
import { nanoToUsd, usdToNano } from '../../shared/money.js';
import type { WalletT } from '../../shared/schemas/wallet.js';

/** The tier's monthly allowance in nano-USD. */
export function allowanceNano(ctx: AppContext, tier: string): number {
  return usdToNano(ctx.config.tiers.get(tier)?.monthlyAllowance ?? 0);
}

export async function loadWalletState(ctx: AppContext, q: Queryable, userId: string, tier: string): Promise<WalletState> {
  const row = await getWalletRow(q, userId);
  if (!row) throw new Error(`wallet of ${userId} missing`);
  return walletState(row, allowanceNano(ctx, tier));
}

/** The spec's Wallet object. */
export function walletView(s: WalletState): WalletT {
  return {
    balance: nanoToUsd(s.balance),
    currency: s.currency,
    unlimited: s.unlimited,
    monthlyAllowance: nanoToUsd(s.allowance),
    monthlyAllowanceUsed: nanoToUsd(s.allowanceUsed),
    monthlyAllowanceRemaining: nanoToUsd(s.allowanceRemaining),
    monthlyAllowanceResetsAt: new Date(s.resetsAt).toISOString(),
    lastAllowanceAt: s.lastAllowanceAt === null ? null : new Date(s.lastAllowanceAt).toISOString(),
  };
}

export function transactionView(t: WalletTxRow) {
  return {
    id: String(t.id),
    type: t.type,
    amount: nanoToUsd(t.amount_nusd),
    balanceAfter: nanoToUsd(t.balance_after_nusd),
    createdAt: new Date(Number(t.created_at)).toISOString(),
    description: t.description,
    ...(t.provider_id ? { providerId: t.provider_id } : {}),
    ...(t.model ? { model: t.model } : {}),
    ...(t.project_id ? { projectId: t.project_id } : {}),
    ...(t.skill_id !== null && t.skill_id !== undefined ? { skillId: Number(t.skill_id) } : {}),
  };
}
