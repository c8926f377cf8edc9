import { randomBytes } from 'node:crypto';
import type { TierDef } from '../../shared/config/defaults.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { AgwError } from '../../shared/errors.js';
import { nanoToUsd, usdToNano } from '../../shared/money.js';
import type { UsageType } from '../../shared/providers/index.js';
import type { AppContext } from '../context.js';
import type { Booking } from './bookings.js';
import type { Ledger } from './sqlite-ledger.js';
import { quotaPeriod, retakeQuotaUnit, returnQuotaUnit, takeQuotaUnit } from './quotas.js';
import { SqliteDb } from '../store/sqlite.js';
import { failUsage, finalizeUsage, insertReservedUsage, walletWithOverride, type NewUsage } from '../store/usage.js';
import { canSpend, debit, walletState, type WalletState } from './wallets.js';
import type { Cost } from './pricing.js';
import { inflightOf } from '../gateway/inflight.js';

/**
 * The money side of a gateway call, in three steps:
 *   reserve  — before the upstream is contacted: take 1 quota unit, check the wallet can
 *              spend, hold the call as reserved.
 *   finalize — record tokens and costs against the concrete model, debit the wallet
 *              (allowance first, then balance) as one wallet transaction keyed by the
 *              usage id (UNIQUE: booked exactly once); before the client sees the end.
 *   release  — on a non-2xx answer or an upstream failure: record 'failed', refund the unit.
 * Two ways to keep the books, chosen by the store:
 *   - the SQLite daemon's ledger (money/sqlite-ledger.ts): reserve holds the unit in memory after
 *     one read, finalize/release append one line to the booking journal, and the writes
 *     reach the store in batches; one daemon per SQLite store makes this exact.
 *   - otherwise (PostgreSQL, several daemons): one transaction per step, the reservation a
 *     'reserved' usage record, orphans released by the sweeper.
 */
export interface Reservation {
  id: string;
  userId: string;
  tier: string;
  usageType: UsageType;
  periodKey: string;
  endpoint: NewUsage['endpoint'];
  projectId: string | null;
  /** set synchronously by the first finalize/release: a call settles once */
  settled: boolean;
  /** ledger bookkeeping: what the booking needs that the durable path keeps in the record */
  providerId: string;
  model: string | null;
  alias: string | null;
  createdAt: number;
}

export interface ReserveInput {
  userId: string;
  tier: string;
  usageType: UsageType;
  endpoint: NewUsage['endpoint'];
  providerId: string;
  model: string | null;
  alias: string | null;
  projectId: string | null;
  /**
   * The store version the caller's credentials were checked at (`storeVersionOf`): the
   * ledger's admission reuses it instead of reading the version again. Sound because an
   * admission row stamped with it was read no earlier than that version: the call is
   * admitted as of its authentication, never on a state older than it.
   */
  storeVersion?: number;
}

/** Usage ids: a random per-process prefix and a counter (unique across daemons, no RNG call per request). */
const ID_PREFIX = `use_${randomBytes(6).toString('hex')}`;
let idSeq = 0;
const nextUsageId = () => `${ID_PREFIX}${(++idSeq).toString(36).padStart(6, '0')}`;

export function tierOf(config: ResolvedConfig, tier: string): TierDef {
  return config.tiers.get(tier) ?? config.tiers.get('free')!;
}

/** Headers telling the official SDKs not to retry a refusal that a retry cannot fix. */
const NO_RETRY = { 'x-should-retry': 'false' };

function quotaExceeded(config: ResolvedConfig, tier: TierDef, usageType: UsageType, limit: number, resetsAt: number): AgwError {
  const better = [...config.tiers.values()].find((t) => {
    const l = t.quotas[usageType] ?? 0;
    return t.id !== tier.id && (l < 0 || l > limit);
  });
  const hint = better
    ? `upgrade to the ${better.displayName} tier (${(better.quotas[usageType] ?? 0) < 0 ? 'no cap' : `${better.quotas[usageType]} per month`}) for more`
    : 'ask an administrator to raise your quota';
  return new AgwError(
    'QUOTA_EXCEEDED',
    `${usageType} quota used up: ${limit} per month on the ${tier.displayName} tier, resets at ${new Date(resetsAt).toISOString()}; ${hint}`,
    undefined,
    NO_RETRY,
  );
}

export function insufficientFunds(s: WalletState): AgwError {
  return new AgwError(
    'INSUFFICIENT_FUNDS',
    'insufficient funds: the wallet balance and this month’s allowance are used up; top up with POST /api/wallet/topup',
    { balance: nanoToUsd(s.balance), currency: s.currency, monthlyAllowance: nanoToUsd(s.allowance) },
    NO_RETRY,
  );
}

/** The daemon's booking ledger when the store has one (SQLite). */
function ledgerOf(ctx: AppContext): Ledger | null {
  return ctx.db instanceof SqliteDb ? ctx.db.ledger : null;
}

/** A wallet state with debits not applied to the store yet taken off (allowance first). */
function lessHeld(s: WalletState, held: number): WalletState {
  if (!held || s.unlimited) return s;
  const fromAllowance = Math.min(s.allowanceRemaining, held);
  return {
    ...s,
    allowanceUsed: s.allowanceUsed + fromAllowance,
    allowanceRemaining: s.allowanceRemaining - fromAllowance,
    balance: s.balance - (held - fromAllowance),
  };
}

export async function reserve(ctx: AppContext, input: ReserveInput): Promise<Reservation> {
  const tier = tierOf(ctx.config, input.tier);
  const now = Date.now();
  const period = quotaPeriod(now);
  const id = nextUsageId();
  const ledger = ledgerOf(ctx);
  if (ledger) {
    await ledger.admit(input.userId, input.usageType, period.key, (w, heldUnits, heldDebit) => {
      if (!w) throw new AgwError('UNAUTHORIZED', 'the account of these credentials no longer exists');
      const limit = w.quota_override !== null ? Number(w.quota_override) : (tier.quotas[input.usageType] ?? 0);
      if (limit === 0 || (limit > 0 && Number(w.quota_used ?? 0) + heldUnits >= limit)) {
        throw quotaExceeded(ctx.config, tier, input.usageType, limit, period.end);
      }
      const s = lessHeld(walletState(w, usdToNano(tier.monthlyAllowance), now), heldDebit);
      if (!canSpend(s)) throw insufficientFunds(s);
    }, input.storeVersion);
  } else await ctx.db.tx(async (q) => {
    const w = await walletWithOverride(q, input.userId, input.usageType);
    if (!w) throw new AgwError('UNAUTHORIZED', 'the account of these credentials no longer exists');
    const limit = w.quota_override !== null ? Number(w.quota_override) : (tier.quotas[input.usageType] ?? 0);
    if (!(await takeQuotaUnit(q, input.userId, input.usageType, period.key, limit))) {
      throw quotaExceeded(ctx.config, tier, input.usageType, limit, period.end);
    }
    const s = walletState(w, usdToNano(tier.monthlyAllowance), now);
    if (!canSpend(s)) throw insufficientFunds(s); // rolls the quota unit back too
    await insertReservedUsage(q, { ...input, id, periodKey: period.key, now });
  });
  inflightOf(ctx).begin();
  return {
    id,
    userId: input.userId,
    tier: input.tier,
    usageType: input.usageType,
    periodKey: period.key,
    endpoint: input.endpoint,
    projectId: input.projectId,
    settled: false,
    providerId: input.providerId,
    model: input.model,
    alias: input.alias,
    createdAt: now,
  };
}

/** The whole booking of a settled call, for the ledger. */
function bookingOf(ctx: AppContext, r: Reservation, settle: { providerId: string; cost: Cost | null; httpStatus: number | null }): Booking {
  const c = settle.cost;
  return {
    id: r.id,
    userId: r.userId,
    usageType: r.usageType,
    endpoint: r.endpoint,
    providerId: settle.providerId,
    model: c ? c.model : r.model,
    alias: r.alias,
    projectId: r.projectId,
    periodKey: r.periodKey,
    createdAt: r.createdAt,
    status: c ? 'finalized' : 'failed',
    promptTokens: c?.promptTokens ?? 0,
    completionTokens: c?.completionTokens ?? 0,
    units: c?.units ?? 0,
    rawNano: c?.rawNano ?? 0,
    customerNano: c?.customerNano ?? 0,
    httpStatus: settle.httpStatus,
    settledAt: Date.now(),
    monthlyAllowance: usdToNano(tierOf(ctx.config, r.tier).monthlyAllowance),
    description: c ? describe(r, settle.providerId, c) : '',
  };
}

const describe = (r: Reservation, providerId: string, cost: Cost) => `${r.endpoint} ${providerId}${cost.model ? `/${cost.model}` : ''}`;

export async function finalize(ctx: AppContext, r: Reservation, providerId: string, cost: Cost, httpStatus: number): Promise<void> {
  if (r.settled) return;
  r.settled = true;
  try {
    await book(ctx, r, providerId, cost, httpStatus);
  } finally {
    inflightOf(ctx).end();
  }
}

async function book(ctx: AppContext, r: Reservation, providerId: string, cost: Cost, httpStatus: number): Promise<void> {
  const ledger = ledgerOf(ctx);
  if (ledger) return ledger.settle(bookingOf(ctx, r, { providerId, cost, httpStatus }));
  const now = Date.now();
  const tier = tierOf(ctx.config, r.tier);
  await ctx.db.tx(async (q) => {
    const outcome = { ...cost, providerId, httpStatus, now };
    if (!(await finalizeUsage(q, r.id, 'reserved', outcome))) {
      // swept as orphaned while it was still running: it finished after all, so take the unit again
      if (!(await finalizeUsage(q, r.id, 'failed', outcome))) return;
      await retakeQuotaUnit(q, r.userId, r.usageType, r.periodKey);
    }
    await debit(q, {
      userId: r.userId,
      amount: cost.customerNano,
      monthlyAllowance: usdToNano(tier.monthlyAllowance),
      type: 'usage',
      description: describe(r, providerId, cost),
      providerId,
      model: cost.model,
      projectId: r.projectId,
      usageId: r.id,
      now,
    });
  });
}

export async function release(ctx: AppContext, r: Reservation, httpStatus: number | null): Promise<void> {
  if (r.settled) return;
  r.settled = true;
  try {
    const ledger = ledgerOf(ctx);
    if (ledger) await ledger.settle(bookingOf(ctx, r, { providerId: r.providerId, cost: null, httpStatus }));
    else await releaseById(ctx, r.id, r.userId, r.usageType, r.periodKey, httpStatus);
  } finally {
    inflightOf(ctx).end();
  }
}

export async function releaseById(
  ctx: AppContext,
  id: string,
  userId: string,
  usageType: string,
  periodKey: string,
  httpStatus: number | null,
): Promise<boolean> {
  const now = Date.now();
  return ctx.db.tx(async (q) => {
    if (!(await failUsage(q, id, httpStatus, now))) return false;
    await returnQuotaUnit(q, userId, usageType, periodKey);
    return true;
  });
}
