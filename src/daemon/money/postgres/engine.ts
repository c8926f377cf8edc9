import type { Logger } from 'pino';
import { usdToNano } from '../../../shared/money.js';
import type { AppContext } from '../../context/index.js';
import type { PgDb } from '../../store/postgres.js';
import type { Booking } from '../bookings.js';
import type { AdmitKey, AdmitRequest, Held, MoneyEngine, RateHeaders, Refusal } from '../engine.js';
import type { TierDef } from '../../../shared/config/defaults.js';
import { PgBatcher, LEASE_LOST, isTransient, type Consumed } from './batches.js';
import { checkBookingType } from './booking-row.js';
import { PgSpool, SPOOL_RETRY_MS } from './spool.js';
import { potNames, type Need, type Pot, type PotKind, type WaitResult } from './pots.js';
import { leaseTiming, Slices, type LeaseTiming } from './slices.js';
import { monthKey, monthStart, nextMonthStart, type WalletState } from '../wallets.js';

/** What an admitted call holds, until it settles. */
interface CallHold {
  needs: Need[];
  epoch: string;
}

/**
 * The money engine of several daemons on one PostgreSQL (issue #16): budget leases, the
 * escrow method. A daemon admits calls against slices of each pot (a wallet's funds, a
 * quota's units, a key's budget or rate) that it leased from the store in one short
 * transaction (agw_lease_v7), so an admission in the steady state is a synchronous check
 * in memory, as on SQLite, holds included. Slices are sized by demand (a hot pot asks
 * for more, the store never grants more than half of what is free beyond the need) and
 * go back when idle, when a peer asks for them (NOTIFY agw_recall) and on shutdown.
 * Settled calls are booked in batches (postgres/batches.ts) that consume the slices; a call
 * answers once its batch committed. A daemon that stops heartbeating loses its slices
 * after the lease TTL (any peer's agw_reclaim_v7), and stops admitting against them
 * itself before then; its bookings after that are refused (AGW01) and it starts a new
 * epoch. Exact across daemons: what all daemons admit never exceeds what the store
 * granted, and grants never exceed what is free.
 */
/** What a booking consumes of no slice (a refusal's record; a call booked after its slices were reclaimed). */
const NO_SLICE: Consumed = { wallet: false, quota: false, budgets: [] };

export class PgMoney implements MoneyEngine {
  private readonly calls = new Map<string, CallHold>();
  private readonly batcher: PgBatcher;
  /** bookings of served streams that PostgreSQL could not take in time */
  private readonly spool: PgSpool;
  private spoolTimer?: NodeJS.Timeout;
  /** this daemon's slices and the lease protocol */
  readonly slices: Slices;

  private constructor(
    private readonly db: PgDb,
    log: Pick<Logger, 'error' | 'warn' | 'info'>,
    timing: LeaseTiming,
    dataDir: string,
  ) {
    this.spool = new PgSpool(dataDir, log);
    this.slices = new Slices(db, log, timing);
    this.batcher = new PgBatcher(db, log, (items) => {
      for (const { b, consumed, epoch } of items) if (epoch === this.slices.epoch) this.consumed(b, consumed, 'committed');
    });
  }

  static async start(ctx: AppContext): Promise<PgMoney> {
    await checkBookingType(ctx.db);
    const m = new PgMoney(ctx.db as PgDb, ctx.log, leaseTiming(ctx.config.gateway.leaseTtlMs), ctx.dataDir);
    await m.slices.start();
    // what an earlier run (or a daemon no longer running) spooled, then every few seconds
    const replay = () => void m.replaySpool().catch((err) => ctx.log.error({ err }, 'replaying spooled bookings failed'));
    replay();
    m.spoolTimer = setInterval(replay, SPOOL_RETRY_MS);
    m.spoolTimer.unref();
    return m;
  }

  private get pots(): Map<string, Pot> {
    return this.slices.pots;
  }

  // -- admission ---------------------------------------------------------------------

  async admit(r: AdmitRequest): Promise<Refusal | null> {
    const needs = this.needsOf(r);
    let target: Need | null;
    // the fast path, unless someone waits on one of these pots (no one jumps the queue)
    if (needs.every((n) => n.pot.unlimited || !n.pot.queue.length)) {
      target = this.tryHold(r.id, needs);
      if (!target) return null;
    } else target = needs.find((n) => n.pot.queue.length)!;
    for (;;) {
      if (Date.now() > this.slices.validUntil) await this.slices.beat(); // throws when the store is unreachable
      const res = await new Promise<WaitResult>((resolve, reject) => {
        target!.pot.queue.push({ id: r.id, needs, recalled: false, resolve, reject });
        void this.drain(target!.pot);
      });
      if (res.held) return null;
      if (res.moveTo) {
        target = res.moveTo;
        continue;
      }
      return res.refuse!.pot.missing ? { kind: 'no-account' } : this.refusal(res.refuse!, r);
    }
  }

  async reserveFunds(userId: string, tier: TierDef, nano: number, now: number): Promise<{ refusal: Refusal } | { release(): void }> {
    // a paid install debits the store directly, against allowance + balance − what daemons
    // leased: this daemon's unused slice goes back first, and peers are asked for theirs;
    // nothing is held in memory (the transaction's own check decides)
    const pot = this.slices.pot('wallet', potNames.wallet(userId), { userId, allowance: usdToNano(tier.monthlyAllowance), month: monthKey(now) });
    await this.slices.returnPots([pot]);
    await this.slices.recall({ pot, amount: nano });
    return { release: () => undefined };
  }

  rateOf(key: AdmitKey, now: number): RateHeaders {
    const state = (p: Pot | undefined, limit: number) => {
      // what this daemon holds of the window plus what the store had, refilled since
      const store = p?.info ? Math.min(limit, p.info.free + (Math.max(0, now - (p.lastLeaseAt || now)) * limit) / 60_000) : limit;
      const remaining = Math.max(0, Math.min(limit, Math.floor(Math.max(0, p?.available ?? 0) + store)));
      return { limit, remaining, resetMs: Math.ceil(((limit - remaining) * 60_000) / limit) };
    };
    const { rpm, tpm } = key.limits;
    return {
      ...(rpm !== null ? { requests: state(this.pots.get(potNames.rpm(key.id)), rpm) } : {}),
      ...(tpm !== null ? { tokens: state(this.pots.get(potNames.tpm(key.id)), tpm) } : {}),
    };
  }

  private needsOf(r: AdmitRequest): Need[] {
    const needs: Need[] = [];
    const allowance = usdToNano(r.tier.monthlyAllowance);
    needs.push({ pot: this.slices.pot('wallet', potNames.wallet(r.userId), { userId: r.userId, allowance, month: monthKey(r.now) }), amount: r.holdNano });
    const tierLimit = r.tier.quotas[r.usageType as keyof TierDef['quotas']] ?? 0;
    needs.push({
      pot: this.slices.pot('quota', potNames.quota(r.userId, r.usageType, r.periodKey), { userId: r.userId, usageType: r.usageType, period: r.periodKey, limit: tierLimit }),
      amount: 1,
    });
    for (const key of r.keys) {
      const { budgetNano, rpm, tpm } = key.limits;
      if (budgetNano !== null && key.period) {
        needs.push({ pot: this.slices.pot('budget', potNames.budget(key.id, key.period), { keyId: key.id, period: key.period, limit: budgetNano }), amount: r.holdNano });
      }
      if (rpm !== null) needs.push({ pot: this.slices.pot('rpm', potNames.rpm(key.id), { keyId: key.id, limit: rpm }), amount: 1 });
      if (tpm !== null) needs.push({ pot: this.slices.pot('tpm', potNames.tpm(key.id), { keyId: key.id, limit: tpm }), amount: Math.min(r.tokens, tpm) });
    }
    // rate windows first: a call over its key's rate takes nothing else
    return needs.sort((a, b) => rank(a.pot.kind) - rank(b.pot.kind));
  }

  /** Holds every need at once, or nothing: returns the first need that does not fit. */
  private tryHold(id: string, needs: Need[]): Need | null {
    if (Date.now() > this.slices.validUntil) return needs[0];
    for (const n of needs) if (!n.pot.unlimited && n.pot.available < n.amount) return n;
    const now = Date.now();
    const held: Need[] = [];
    for (const n of needs) {
      if (n.pot.unlimited) continue;
      if (n.pot.kind === 'rpm') {
        n.pot.granted -= n.amount; // a request token is spent when the request is made
        n.pot.lastUse = now;
        continue;
      }
      n.pot.held += n.amount;
      n.pot.calls++;
      n.pot.lastUse = now;
      n.pot.heldDirty = true;
      held.push(n);
      // a hot pot running low leases its next slice before anyone has to wait for it
      const p = n.pot;
      if (!p.leasing && !p.queue.length && p.lastWant > 0 && p.available < p.lastWant / 4) void this.slices.leaseOne(p, p.lastWant, p.lastWant, p.lastWant).catch(() => undefined);
    }
    this.calls.set(id, { needs: held, epoch: this.slices.epoch });
    return null;
  }

  /**
   * Serves a pot's queue in order: the first admission in it takes its holds as soon as
   * the slice covers it (a lease for what the whole queue lacks of this pot is one round
   * trip); one short of another pot moves to that pot's queue; one the store cannot
   * cover, after asking the other daemons once, is refused, and the next is served.
   */
  private async drain(pot: Pot): Promise<void> {
    if (pot.draining) return;
    pot.draining = true;
    try {
      while (pot.queue.length) {
        const w = pot.queue[0];
        const short = this.tryHold(w.id, w.needs);
        if (!short) {
          pot.queue.shift();
          w.resolve({ held: true });
          continue;
        }
        if (short.pot !== pot) {
          pot.queue.shift();
          w.resolve({ moveTo: short });
          continue;
        }
        const have = Math.max(0, pot.available);
        const queued = pot.queue.reduce((sum, q) => sum + (q.needs.find((n) => n.pot === pot)?.amount ?? 0), 0);
        const granted = await this.slices.leaseOne(pot, queued - have, short.amount - have, pot.want(queued - have, short.amount, Date.now()));
        if (granted > 0 || pot.unlimited) continue;
        if (!pot.missing && !w.recalled && (await this.slices.recall(short))) {
          w.recalled = true;
          continue;
        }
        pot.queue.shift();
        w.resolve({ refuse: short });
      }
    } catch (err) {
      for (const w of pot.queue.splice(0)) w.reject(err); // the store cannot be reached: every waiter gets its 503
    } finally {
      pot.draining = false;
    }
  }

  private refusal(short: Need, r: AdmitRequest): Refusal {
    const p = short.pot;
    const info = p.info;
    if (p.kind === 'quota') return { kind: 'quota', limit: info?.limit ?? p.params.limit ?? 0 };
    if (p.kind === 'rpm' || p.kind === 'tpm') {
      const limit = p.params.limit ?? 1;
      const have = Math.max(0, p.available) + (info?.free ?? 0);
      return { kind: 'rate', which: p.kind === 'rpm' ? 'requests' : 'tokens', limit, retryAfterMs: Math.max(1, Math.ceil(((short.amount - have) * 60_000) / limit)) };
    }
    if (p.kind === 'budget') {
      const budget = p.params.limit ?? 0;
      const spent = (info?.used ?? 0) + p.pending;
      const available = Math.max(0, (info?.free ?? 0) + Math.max(0, p.available));
      return { kind: 'keyBudget', keyId: p.params.keyId ?? '', budget, spent, held: Math.max(0, budget - spent - available) };
    }
    const allowance = usdToNano(r.tier.monthlyAllowance);
    const balance = info?.balance ?? 0;
    const allowanceRemaining = info?.allowanceRemaining ?? allowance;
    const wallet: WalletState = {
      balance,
      currency: info?.currency ?? 'USD',
      unlimited: false,
      allowance,
      allowanceUsed: info?.allowanceUsed ?? 0,
      allowanceRemaining,
      resetsAt: nextMonthStart(r.now),
      lastAllowanceAt: allowance > 0 ? monthStart(r.now) : null,
    };
    // what is spoken for: everything but what is free in the store and unused here
    const available = Math.max(0, (info?.free ?? 0) + Math.max(0, p.available));
    return { kind: 'funds', wallet, held: Math.max(0, allowanceRemaining + balance - available) };
  }

  // -- settling ------------------------------------------------------------------------

  async settle(b: Booking): Promise<void> {
    const h = this.calls.get(b.id);
    this.calls.delete(b.id);
    const consumed: Consumed = { wallet: false, quota: false, budgets: [] };
    if (h) {
      for (const n of h.needs) {
        n.pot.held -= n.amount;
        n.pot.calls--;
        n.pot.heldDirty = true;
        if (n.pot.kind === 'wallet') consumed.wallet = true;
        else if (n.pot.kind === 'quota') consumed.quota = true;
        else if (n.pot.kind === 'budget') consumed.budgets.push(n.pot.name);
        // tokens are spent as used; what the call did not use stays in this daemon's slice
        else if (n.pot.kind === 'tpm' && h.epoch === this.slices.epoch) n.pot.granted -= Math.min(n.amount, b.status === 'finalized' ? b.promptTokens + b.completionTokens : 0);
      }
    }
    const epoch = h?.epoch ?? this.slices.epoch;
    if (epoch === this.slices.epoch) this.consumed(b, consumed, 'pending');
    try {
      await this.batcher.push(b, consumed, epoch);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (b.stream && code !== LEASE_LOST && isTransient(err)) {
        // a streamed call was served before its booking: PostgreSQL out of reach for longer
        // than the batch's retries must not make it free. It is spooled to disk and booked
        // later; what it consumed of the slices stays pending meanwhile, so nobody spends
        // it twice. (A JSON call that fails here is answered 503 and costs nothing.)
        await this.spool.add({ b, consumed, epoch });
        return;
      }
      if (epoch === this.slices.epoch) this.consumed(b, consumed, 'failed');
      if (code !== LEASE_LOST) throw err;
      // the store took this daemon for dead and returned its slices, this call's hold with
      // them: the call was served, so it is booked all the same, under the new epoch and
      // from no slice (the wallet pays what it has; the rest is written off, never below zero)
      try {
        await this.bookAfterLoss(b, epoch);
      } catch (again) {
        if (!b.stream || !isTransient(again)) throw again;
        await this.spool.add({ b, consumed: NO_SLICE, epoch }); // booked from no slice later
      }
    }
  }

  /**
   * Books what was spooled (postgres/spool.ts): against the slices it was admitted against
   * while they are still this daemon's, else (the daemon was taken for dead meanwhile, or
   * it is another run's) under this daemon's identity from no slice.
   */
  private replaySpool(): Promise<number> {
    return this.spool.replay(({ b, consumed, epoch }) =>
      epoch === this.slices.epoch ? this.batcher.push(b, consumed, epoch) : this.batcher.push(b, NO_SLICE, this.slices.epoch),
    );
  }

  async record(b: Booking): Promise<void> {
    const epoch = this.slices.epoch;
    try {
      await this.batcher.push(b, NO_SLICE, epoch);
    } catch (err) {
      // a refusal's record is kept too when the daemon was taken for dead meanwhile (its x-request-id names it)
      if ((err as { code?: string }).code === LEASE_LOST) await this.bookAfterLoss(b, epoch).catch(() => undefined);
    }
  }

  /** Books `b` from no slice under the identity that follows `lost` (registered by the heartbeat first). */
  private async bookAfterLoss(b: Booking, lost: string): Promise<void> {
    this.slices.lost(lost);
    await this.slices.beat();
    await this.batcher.push(b, NO_SLICE, this.slices.epoch);
  }

  /**
   * What a settled call takes from its slices: pending until its batch commits, then off
   * the grant; a batch that failed gives it back.
   */
  private consumed(b: Booking, c: Consumed, step: 'pending' | 'committed' | 'failed'): void {
    if (b.status !== 'finalized') return;
    const apply = (p: Pot | undefined, amount: number) => {
      if (!p || !amount) return;
      p.pending += step === 'pending' ? amount : -amount;
      if (step === 'committed') p.granted -= amount;
    };
    if (c.wallet) apply(this.pots.get(potNames.wallet(b.userId)), b.customerNano);
    if (c.quota) apply(this.pots.get(potNames.quota(b.userId, b.usageType, b.periodKey)), 1);
    for (const pot of c.budgets) apply(this.pots.get(pot), b.customerNano);
  }

  async heldBy(userId: string): Promise<Held> {
    const mine = this.pots.get(potNames.wallet(userId));
    const [others] = await this.db.call<{ nano: number; calls: number }>(
      'agw_held',
      'SELECT coalesce(sum(held), 0)::bigint AS nano, coalesce(sum(held_calls), 0)::bigint AS calls FROM leases WHERE pot = $1 AND daemon_id <> $2',
      [potNames.wallet(userId), this.slices.epoch],
    );
    return { nano: (mine?.held ?? 0) + Number(others.nano), calls: (mine?.calls ?? 0) + Number(others.calls) };
  }

  async close(): Promise<void> {
    clearInterval(this.spoolTimer);
    await this.spool.idle();
    await this.batcher.drain(); // what is still spooled stays on disk for the next start
    await this.slices.stop();
  }

}

/** Admission order of a call's pots: rate windows, then quota, budget and wallet. */
function rank(kind: PotKind): number {
  return kind === 'rpm' ? 0 : kind === 'tpm' ? 1 : kind === 'quota' ? 2 : kind === 'budget' ? 3 : 4;
}

