import type { TierDef } from '../../shared/config/defaults.js';
import type { Booking } from './bookings.js';
import type { RateState } from './rates.js';
import type { KeyLimits } from './key-limits.js';
import type { WalletState } from './wallets.js';

/**
 * The money engine: what admits a metered call against everything that limits it, holds
 * its worst case while it runs, and books it once when it settles. One interface, two
 * implementations chosen by the store:
 *
 * - sqlite/engine.ts: the one daemon of a SQLite store owns it whole (a lease of
 *   everything): admission reads the store once (cached until it changes) and counts
 *   what it holds in memory; bookings go to a journal before the answer and reach the
 *   store in batches (sqlite/ledger.ts).
 * - postgres/engine.ts: several daemons on one PostgreSQL each admit against slices they
 *   lease from the shared rows (escrow), and book in batches that commit before the
 *   answers go out.
 *
 * Either way the rules are the same (CONTRACT "Spending order … Holds"): a call is
 * admitted only when allowance left + balance − what is held for calls in flight covers
 * its hold (hold.ts), and when its quota has a unit left; settling replaces the hold by
 * the actual cost, never more (settle.ts): a wallet never goes below zero.
 */
export interface AdmitRequest {
  /** the call's usage id */
  id: string;
  userId: string;
  tier: TierDef;
  usageType: string;
  /** the quota window (quotas.ts) */
  periodKey: string;
  /** the call's hold in nano-USD (not taken from an unlimited wallet) */
  holdNano: number;
  /** tokens the hold covers (prompt bound + output cap): what a tokens-per-minute limit counts */
  tokens: number;
  /**
   * The limited keys the call counts against: the key that makes it (when it has limits)
   * and the keys it was made with (a key made with a limited key spends from its maker's
   * budget and rates too), nearest first.
   */
  keys: readonly AdmitKey[];
  now: number;
  /** SQLite: the store version the caller's key was checked at (see Ledger.admit) */
  storeVersion?: number;
}

/** A key with limits, as admission needs it. */
export interface AdmitKey {
  id: string;
  limits: KeyLimits;
  /** the budget period the call counts in (budgetPeriodKey), when the key has a budget */
  period: string | null;
}

/** Why a call was not admitted (nothing is held then). */
export type Refusal =
  | { kind: 'no-account' }
  | { kind: 'quota'; limit: number }
  /** `wallet`: as the store has it, less bookings not applied yet; `held`: holds of calls in flight */
  | { kind: 'funds'; wallet: WalletState; held: number }
  /** the key's budget: spent in the period, held by its calls in flight */
  | { kind: 'keyBudget'; keyId: string; budget: number; spent: number; held: number }
  | { kind: 'rate'; which: 'requests' | 'tokens'; limit: number; retryAfterMs: number };

/** A key's rate windows after an admission (the x-ratelimit-* headers). */
export interface RateHeaders {
  requests?: RateState;
  tokens?: RateState;
}

export interface Held {
  /** nano-USD held by calls in flight */
  nano: number;
  calls: number;
}

export interface MoneyEngine {
  /** Takes the call's quota unit and hold, or says what is short. */
  admit(r: AdmitRequest): Promise<Refusal | null>;
  /** Books a settled call and releases its hold; resolves once the booking is durable. */
  settle(b: Booking): Promise<void>;
  /**
   * A refused call's record (request log), booked with the next batch; resolves once it is
   * durable, or failed to be (never rejects: a refusal is answered either way). The refusal
   * waits for it, so the x-request-id it carries names a record that can be looked up.
   */
  record(b: Booking): Promise<void>;
  /**
   * Makes `nano` of a wallet spendable by one transaction of this daemon (a paid
   * install, which debits it with `requireCover` against allowance + balance − leased):
   * it is held from the calls of this daemon until `release()`. Refuses as `admit`.
   */
  reserveFunds(userId: string, tier: TierDef, nano: number, now: number): Promise<{ refusal: Refusal } | { release(): void }>;
  /** A key's rate windows as they stand (after an admission, for its headers). */
  rateOf(key: AdmitKey, now: number): RateHeaders;
  /** What a user's calls in flight hold (GET /api/wallet's `held`). */
  heldBy(userId: string): Promise<Held>;
  close(): Promise<void>;
}

/** The monthly allowance of a tier in nano-USD (what admission and bookings spend first). */
export type AllowanceOf = (tier: TierDef) => number;
