/**
 * What one daemon knows of a pot it admits against (PostgreSQL lease engine): the slice
 * it leased, what calls in flight hold of it, what settled calls have consumed but their
 * batch has not committed yet. Admission is a synchronous check of `available`; leasing
 * more, returning what is idle and booking are the engine's (postgres/engine.ts).
 *
 * Pot names, also the lease rows' (postgres/functions.ts): '1w:<user>' wallet (nano-USD),
 * '2q:<user>:<usage type>:<period>' quota units, '3b:<key>:<period>' key budget
 * (nano-USD), '4r:<key>' / '5t:<key>' request / token buckets.
 */
export type PotKind = 'wallet' | 'quota' | 'budget' | 'rpm' | 'tpm';

/** What the store said of a pot at the last lease (for refusals and rate headers). */
export interface PotInfo {
  /** free in the store after the grant (not leased by any daemon); buckets: the level */
  free: number;
  balance?: number;
  allowanceRemaining?: number;
  allowanceUsed?: number;
  currency?: string;
  limit?: number;
  used?: number;
  /** buckets: when the level was read (the store's clock, epoch ms) */
  at?: number;
  /** what the other daemons had leased of it at the time */
  leasedByOthers?: number;
}

/** How the lease request names the pot's row (kind-specific fields of agw_lease_v7's requests). */
export interface PotParams {
  userId?: string;
  usageType?: string;
  period?: string;
  keyId?: string;
  /** wallet: the tier's monthly allowance (nano); quota: the tier's limit; budget: the key's; buckets: per minute */
  limit?: number;
  allowance?: number;
  month?: string;
}

/** One need of an admission: this much of this pot. */
export interface Need {
  pot: Pot;
  amount: number;
}

/** What a queued admission is told: it holds what it needs, waits on another pot, or is refused for `refuse`. */
export type WaitResult = { held?: true; moveTo?: Need; refuse?: Need };

/** An admission waiting in a pot's queue. */
export interface Waiter {
  id: string;
  needs: Need[];
  /** the other daemons were asked for their slices on its behalf once */
  recalled: boolean;
  resolve(r: WaitResult): void;
  reject(err: unknown): void;
}

export class Pot {
  /** the slice this daemon leased (the store's leases.amount for it) */
  granted = 0;
  /** held by calls in flight */
  held = 0;
  calls = 0;
  /** consumed by settled calls whose batch has not committed */
  pending = 0;
  /** no limit applies (an unlimited wallet, a quota of -1): admitted without a slice */
  unlimited = false;
  /** the store has no such account (deleted) */
  missing = false;
  info: PotInfo | null = null;
  /** the last slice asked for: hot pots ask for more (see `want`) */
  lastWant = 0;
  lastLeaseAt = 0;
  lastUse = 0;
  /** when an admission last asked for this pot (Slices.pot) */
  touched = 0;
  /** a lease of this pot in flight (resolves to its grant) */
  leasing: Promise<number> | null = null;
  /** admissions waiting for this pot, served in order (postgres/engine.ts drain) */
  queue: Waiter[] = [];
  draining = false;
  /** holds changed since the last heartbeat (wallets publish theirs) */
  heldDirty = false;

  constructor(
    readonly name: string,
    readonly kind: PotKind,
    public params: PotParams,
  ) {}

  get available(): number {
    return this.granted - this.held - this.pending;
  }

  /**
   * How much to ask for when `need` is short: twice the last slice when the last lease
   * was less than a second ago (a hot pot), else the need's multiple; never less than
   * what is short. The store grants at most half of what is free beyond the need.
   */
  want(short: number, need: number, now: number): number {
    const base = now - this.lastLeaseAt < 1000 ? Math.max(this.lastWant * 2, need * 4) : need * 4;
    const cap = this.kind === 'quota' || this.kind === 'rpm' ? 64 : this.kind === 'tpm' ? 1_000_000 : Number.MAX_SAFE_INTEGER;
    return Math.max(short, Math.min(base, cap));
  }
}

export const potNames = {
  wallet: (userId: string) => `1w:${userId}`,
  quota: (userId: string, usageType: string, period: string) => `2q:${userId}:${usageType}:${period}`,
  budget: (keyId: string, period: string) => `3b:${keyId}:${period}`,
  rpm: (keyId: string) => `4r:${keyId}`,
  tpm: (keyId: string) => `5t:${keyId}`,
};

/** The user a pot belongs to (wallet and quota pots), for invalidation by user. */
export function userOfPot(name: string): string | undefined {
  if (name.startsWith('1w:')) return name.slice(3);
  if (name.startsWith('2q:')) return name.split(':')[1];
  return undefined;
}
