import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { usdToNano } from '../../shared/money.js';
import type { AppContext } from '../context.js';
import type { PgDb } from '../store/postgres.js';
import type { Booking } from './bookings.js';
import type { AdmitKey, AdmitRequest, Held, MoneyEngine, RateHeaders, Refusal } from './engine.js';
import type { TierDef } from '../../shared/config/defaults.js';
import { PgBatcher, LEASE_LOST, type Consumed } from './pg-batch.js';
import { Pot, potNames, userOfPot, type PotKind, type PotParams } from './pg-pots.js';
import { monthKey, monthStart, nextMonthStart, type WalletState } from './wallets.js';

/** One need of an admission: this much of this pot. */
interface Need {
  pot: Pot;
  amount: number;
}

/** What an admitted call holds, until it settles. */
interface CallHold {
  needs: Need[];
  epoch: string;
}

interface LeaseAnswer {
  pot: string;
  granted?: number;
  free?: number;
  missing?: boolean;
  unlimited?: boolean;
  balance?: number;
  allowanceRemaining?: number;
  allowanceUsed?: number;
  currency?: string;
  limit?: number;
  used?: number;
  level?: number;
  at?: number;
  leased?: number;
}

/** Timing of the lease protocol (config gateway.leaseTtlMs; the rest follows from it). */
export interface LeaseTiming {
  /** a daemon's slices are reclaimed this long after its last heartbeat */
  ttlMs: number;
  heartbeatMs: number;
  /** a slice unused this long goes back to the store */
  idleMs: number;
  /** how long a short admission waits for peers to return slices */
  recallWaitMs: number;
}

export function leaseTiming(ttlMs: number): LeaseTiming {
  return { ttlMs, heartbeatMs: Math.max(100, Math.floor(ttlMs / 5)), idleMs: Math.min(2000, Math.max(200, Math.floor(ttlMs / 5))), recallWaitMs: 150 };
}

/**
 * The money engine of several daemons on one PostgreSQL (issue #16): budget leases, the
 * escrow method. A daemon admits calls against slices of each pot (a wallet's funds, a
 * quota's units, a key's budget or rate) that it leased from the store in one short
 * transaction (agw_lease_v7), so an admission in the steady state is a synchronous check
 * in memory, as on SQLite, holds included. Slices are sized by demand (a hot pot asks
 * for more, the store never grants more than half of what is free beyond the need) and
 * go back when idle, when a peer asks for them (NOTIFY agw_recall) and on shutdown.
 * Settled calls are booked in batches (pg-batch.ts) that consume the slices; a call
 * answers once its batch committed. A daemon that stops heartbeating loses its slices
 * after the lease TTL (any peer's agw_reclaim_v7), and stops admitting against them
 * itself before then; its bookings after that are refused (AGW01) and it starts a new
 * epoch. Exact across daemons: what all daemons admit never exceeds what the store
 * granted, and grants never exceed what is free.
 */
export class PgMoney implements MoneyEngine {
  private readonly pots = new Map<string, Pot>();
  private readonly calls = new Map<string, CallHold>();
  private readonly batcher: PgBatcher;
  private readonly waiters = new Map<string, Set<() => void>>();
  private timers: NodeJS.Timeout[] = [];
  /** this daemon's current identity in the store (a new one after its slices were reclaimed) */
  private epoch = newEpoch();
  /** leases may be used until then (local clock: the last heartbeat sent + TTL − a margin) */
  private validUntil = 0;
  private heartbeat: Promise<void> | null = null;
  private closed = false;
  readonly stats = { leases: 0, returns: 0, recalls: 0, lost: 0 };

  private constructor(
    private readonly db: PgDb,
    private readonly log: Pick<Logger, 'error' | 'warn' | 'info'>,
    private readonly timing: LeaseTiming,
  ) {
    this.batcher = new PgBatcher(db, log, (items) => {
      for (const { b, consumed, epoch } of items) if (epoch === this.epoch) this.consumed(b, consumed, true);
    });
  }

  static async start(ctx: AppContext): Promise<PgMoney> {
    const db = ctx.db as PgDb;
    const m = new PgMoney(db, ctx.log, leaseTiming(ctx.config.gateway.leaseTtlMs));
    await m.register();
    await db.listen('agw_recall', (p) => m.onRecall(p));
    await db.listen('agw_returned', (p) => m.wake(p));
    await db.listen('agw_changed', (p) => m.onChanged(p));
    db.onReset(() => m.onChanged('*'));
    m.timers.push(setInterval(() => void m.beat().catch(() => undefined), m.timing.heartbeatMs));
    m.timers.push(setInterval(() => void m.returnIdle().catch(() => undefined), m.timing.idleMs));
    for (const t of m.timers) t.unref();
    return m;
  }

  // -- admission ---------------------------------------------------------------------

  async admit(r: AdmitRequest): Promise<Refusal | null> {
    const needs = this.needsOf(r);
    let short = this.tryHold(r.id, needs);
    if (!short) return null;
    let recalled = false;
    for (let round = 0; round < 8; round++) {
      if (Date.now() > this.validUntil) await this.beat(); // throws when the store is unreachable
      const granted = await this.ask(short);
      short = this.tryHold(r.id, needs);
      if (!short) return null;
      if (short.pot.missing) return { kind: 'no-account' };
      if (granted > 0) continue; // progress (others took it first, or another pot is short): ask again
      // short in the store too: other daemons' unused slices are the last place to look
      if (!recalled && (await this.recall(short))) {
        recalled = true;
        continue;
      }
      break;
    }
    return this.refusal(short, r);
  }

  async reserveFunds(userId: string, tier: TierDef, nano: number, now: number): Promise<{ refusal: Refusal } | { release(): void }> {
    // a paid install debits the store directly, against allowance + balance − what daemons
    // leased: this daemon's unused slice goes back first, and peers are asked for theirs;
    // nothing is held in memory (the transaction's own check decides)
    const pot = this.pot('wallet', potNames.wallet(userId), { userId, allowance: usdToNano(tier.monthlyAllowance), month: monthKey(now) });
    await this.returnPots([pot]);
    await this.recall({ pot, amount: nano });
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
    needs.push({ pot: this.pot('wallet', potNames.wallet(r.userId), { userId: r.userId, allowance, month: monthKey(r.now) }), amount: r.holdNano });
    const tierLimit = r.tier.quotas[r.usageType as keyof TierDef['quotas']] ?? 0;
    needs.push({
      pot: this.pot('quota', potNames.quota(r.userId, r.usageType, r.periodKey), { userId: r.userId, usageType: r.usageType, period: r.periodKey, limit: tierLimit }),
      amount: 1,
    });
    const key = r.key;
    if (key) {
      const { budgetNano, rpm, tpm } = key.limits;
      if (budgetNano !== null && key.period) {
        needs.push({ pot: this.pot('budget', potNames.budget(key.id, key.period), { keyId: key.id, period: key.period, limit: budgetNano }), amount: r.holdNano });
      }
      if (rpm !== null) needs.push({ pot: this.pot('rpm', potNames.rpm(key.id), { keyId: key.id, limit: rpm }), amount: 1 });
      if (tpm !== null) needs.push({ pot: this.pot('tpm', potNames.tpm(key.id), { keyId: key.id, limit: tpm }), amount: Math.min(r.tokens, tpm) });
    }
    // rate windows first: a call over its key's rate takes nothing else
    return needs.sort((a, b) => rank(a.pot.kind) - rank(b.pot.kind));
  }

  private pot(kind: PotKind, name: string, params: PotParams): Pot {
    let p = this.pots.get(name);
    if (!p) this.pots.set(name, (p = new Pot(name, kind, params)));
    else p.params = params; // the tier's allowance or limit as of this call
    return p;
  }

  /** Holds every need at once, or nothing: returns the first need that does not fit. */
  private tryHold(id: string, needs: Need[]): Need | null {
    if (Date.now() > this.validUntil) return needs[0];
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
      if (!p.leasing && p.lastWant > 0 && p.available < p.lastWant / 4) void this.leaseOne(p, p.lastWant, p.lastWant, p.lastWant).catch(() => undefined);
    }
    this.calls.set(id, { needs: held, epoch: this.epoch });
    return null;
  }

  /**
   * Waits for a lease of the need's pot that covers every admission waiting for it (the
   * one in flight, then one of its own if still short); resolves to what was granted.
   */
  private async ask(n: Need): Promise<number> {
    const p = n.pot;
    p.waiting.push(n.amount);
    try {
      let granted = 0;
      if (p.leasing) granted += await p.leasing;
      if (p.available >= n.amount) return granted || 1;
      if (p.leasing) return granted + (await p.leasing);
      const short = p.waiting.reduce((a, b) => a + b, 0) - Math.max(0, p.available);
      const least = Math.min(...p.waiting) - Math.max(0, p.available);
      return granted + (await this.leaseOne(p, short, Math.max(1, least), p.want(short, n.amount, Date.now())));
    } finally {
      p.waiting.splice(p.waiting.indexOf(n.amount), 1);
    }
  }

  /** One lease of one pot (a prefetch, or what waiting admissions lack); resolves to the grant. */
  private leaseOne(p: Pot, need: number, least: number, want: number): Promise<number> {
    const leasing = this.lease([{ pot: p, need: Math.ceil(need), least: Math.ceil(least), want: Math.ceil(Math.max(want, need)) }]).then((g) => g.get(p.name) ?? 0);
    p.leasing = leasing;
    return leasing.finally(() => {
      if (p.leasing === leasing) p.leasing = null;
    });
  }

  private async lease(ask: { pot: Pot; need: number; least: number; want: number }[]): Promise<Map<string, number>> {
    const epoch = this.epoch;
    const reqs = ask.map(({ pot, need, least, want }) => ({ pot: pot.name, kind: pot.kind, ...pot.params, need: Math.max(1, need), least: Math.max(1, least), want }));
    const grants = new Map<string, number>();
    try {
      const [row] = await this.db.call<{ a: LeaseAnswer[] }>('agw_lease', 'SELECT agw_lease_v7($1, $2::jsonb) AS a', [epoch, JSON.stringify(reqs)]);
      this.stats.leases++;
      if (epoch !== this.epoch) return grants; // reclaimed meanwhile: those grants went back with the rest
      const now = Date.now();
      for (const a of row.a) {
        const p = this.pots.get(a.pot);
        if (!p) continue;
        if (a.unlimited) {
          p.unlimited = true;
          grants.set(a.pot, 1);
          continue;
        }
        p.missing = a.missing === true;
        if (p.missing) continue;
        const granted = a.granted ?? 0;
        p.granted += granted;
        grants.set(a.pot, granted);
        p.info = {
          free: a.free ?? a.level ?? 0,
          balance: a.balance,
          allowanceRemaining: a.allowanceRemaining,
          allowanceUsed: a.allowanceUsed,
          currency: a.currency,
          limit: a.limit,
          used: a.used,
          at: a.at,
          leasedByOthers: a.leased === undefined ? undefined : Math.max(0, a.leased - p.granted),
        };
        p.lastWant = reqs.find((r) => r.pot === a.pot)?.want ?? p.lastWant;
        p.lastLeaseAt = now;
      }
      return grants;
    } catch (err) {
      if ((err as { code?: string }).code === LEASE_LOST) this.lost();
      throw err;
    }
  }

  /**
   * Asks the other daemons to return their unused slices of a pot that is short here,
   * and waits a moment for one to say it did. False when no other daemon has leased
   * enough of it to make up the shortfall (nothing to wait for).
   */
  private async recall(short: Need): Promise<boolean> {
    const p = short.pot;
    const missing = short.amount - Math.max(0, p.available) - (p.info?.free ?? 0);
    if (missing <= 0) return true; // freed meanwhile: lease again
    if (p.kind !== 'rpm' && p.kind !== 'tpm' && (p.info?.leasedByOthers ?? 0) <= 0) return false;
    this.stats.recalls++;
    const woken = new Promise<void>((resolve) => {
      const t = setTimeout(done, this.timing.recallWaitMs);
      const set = this.waiters.get(p.name) ?? new Set();
      this.waiters.set(p.name, set);
      set.add(done);
      function done() {
        clearTimeout(t);
        set.delete(done);
        resolve();
      }
    });
    await this.db.call('agw_notify', 'SELECT pg_notify($1, $2)', ['agw_recall', `${this.epoch} ${p.name}`]);
    await woken;
    return true;
  }

  private wake(potName: string): void {
    for (const w of this.waiters.get(potName) ?? []) w();
  }

  /** A peer is short of `pot`: return what this daemon does not use of it. */
  private onRecall(payload: string): void {
    const [from, name] = payload.split(' ');
    if (from === this.epoch || !name) return;
    const p = this.pots.get(name);
    if (!p || p.available <= 0) return;
    void this.returnPots([p])
      .then((n) => (n > 0 ? this.db.call('agw_notify', 'SELECT pg_notify($1, $2)', ['agw_returned', name]) : undefined))
      .catch(() => undefined);
  }

  /** A key, tier, override or unlimited flag changed (`*`: anything may have): forget what follows from it. */
  private onChanged(userId: string): void {
    const stale: Pot[] = [];
    for (const p of this.pots.values()) {
      const owner = userOfPot(p.name);
      if (userId !== '*' && owner !== undefined && owner !== userId) continue;
      p.unlimited = false;
      if (p.available > 0) stale.push(p);
    }
    void this.returnPots(stale).catch(() => undefined);
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
      return { kind: 'keyBudget', budget, spent, held: Math.max(0, budget - spent - available) };
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
    const consumed: Consumed = { wallet: false, quota: false, budget: false };
    if (h) {
      for (const n of h.needs) {
        n.pot.held -= n.amount;
        n.pot.calls--;
        n.pot.heldDirty = true;
        if (n.pot.kind === 'wallet') consumed.wallet = true;
        else if (n.pot.kind === 'quota') consumed.quota = true;
        else if (n.pot.kind === 'budget') consumed.budget = true;
        // tokens are spent as used; what the call did not use stays in this daemon's slice
        else if (n.pot.kind === 'tpm' && h.epoch === this.epoch) n.pot.granted -= Math.min(n.amount, b.status === 'finalized' ? b.promptTokens + b.completionTokens : 0);
      }
    }
    const epoch = h?.epoch ?? this.epoch;
    if (epoch === this.epoch) this.consumed(b, consumed, false);
    try {
      await this.batcher.push(b, consumed, epoch);
    } catch (err) {
      if (epoch === this.epoch) this.unconsumed(b, consumed);
      if ((err as { code?: string }).code === LEASE_LOST) this.lost();
      throw err;
    }
  }

  record(b: Booking): void {
    void this.batcher.push(b, { wallet: false, quota: false, budget: false }, this.epoch).catch(() => undefined);
  }

  /** What a settled call takes from its slices: pending until its batch commits, then off the grant. */
  private consumed(b: Booking, c: Consumed, committed: boolean): void {
    if (b.status !== 'finalized') return;
    const apply = (p: Pot | undefined, amount: number) => {
      if (!p || !amount) return;
      if (committed) {
        p.pending -= amount;
        p.granted -= amount;
      } else p.pending += amount;
    };
    if (c.wallet) apply(this.pots.get(potNames.wallet(b.userId)), b.customerNano);
    if (c.quota) apply(this.pots.get(potNames.quota(b.userId, b.usageType, b.periodKey)), 1);
    if (c.budget && b.keyId && b.keyPeriod) apply(this.pots.get(potNames.budget(b.keyId, b.keyPeriod)), b.customerNano);
  }

  private unconsumed(b: Booking, c: Consumed): void {
    if (b.status !== 'finalized') return;
    if (c.wallet) {
      const p = this.pots.get(potNames.wallet(b.userId));
      if (p) p.pending -= b.customerNano;
    }
    if (c.quota) {
      const p = this.pots.get(potNames.quota(b.userId, b.usageType, b.periodKey));
      if (p) p.pending -= 1;
    }
    if (c.budget && b.keyId && b.keyPeriod) {
      const p = this.pots.get(potNames.budget(b.keyId, b.keyPeriod));
      if (p) p.pending -= b.customerNano;
    }
  }

  async heldBy(userId: string): Promise<Held> {
    const mine = this.pots.get(potNames.wallet(userId));
    const [others] = await this.db.call<{ nano: number; calls: number }>(
      'agw_held',
      'SELECT coalesce(sum(held), 0)::bigint AS nano, coalesce(sum(held_calls), 0)::bigint AS calls FROM leases WHERE pot = $1 AND daemon_id <> $2',
      [potNames.wallet(userId), this.epoch],
    );
    return { nano: (mine?.held ?? 0) + Number(others.nano), calls: (mine?.calls ?? 0) + Number(others.calls) };
  }

  // -- the daemon's leases: heartbeat, idle returns, loss, shutdown --------------------------

  private async register(): Promise<void> {
    const sent = Date.now();
    await this.db.call('agw_register', 'INSERT INTO daemons (id, started_at, expires_at) VALUES ($1, $2::bigint, $2::bigint + $3::bigint)', [this.epoch, sent, this.timing.ttlMs]);
    this.validUntil = sent + this.timing.ttlMs - Math.floor(this.timing.ttlMs / 4);
  }

  /** Extends this daemon's leases (and publishes its wallets' holds); returns expired peers' slices. */
  private beat(): Promise<void> {
    this.heartbeat ??= (async () => {
      const sent = Date.now();
      const held = [];
      for (const p of this.pots.values()) {
        if (p.kind !== 'wallet' || !p.heldDirty) continue;
        p.heldDirty = false;
        held.push({ pot: p.name, held: p.held, calls: p.calls });
      }
      const [row] = await this.db.call<{ ok: boolean }>('agw_alive', 'SELECT agw_alive_v7($1, $2, $3::jsonb) AS ok', [this.epoch, this.timing.ttlMs, JSON.stringify(held)]);
      if (!row.ok) {
        this.lost();
        await this.register();
      } else this.validUntil = sent + this.timing.ttlMs - Math.floor(this.timing.ttlMs / 4);
      const [r] = await this.db.call<{ n: number }>('agw_reclaim', 'SELECT agw_reclaim_v7() AS n', []);
      if (r.n > 0) this.log.warn({ daemons: r.n }, 'returned the slices of daemons that stopped');
    })().finally(() => (this.heartbeat = null));
    return this.heartbeat;
  }

  /** Returns the unused part of pots not used for a while. */
  private returnIdle(): Promise<number> {
    const before = Date.now() - this.timing.idleMs;
    return this.returnPots([...this.pots.values()].filter((p) => p.lastUse < before && p.available > 0 && !p.leasing));
  }

  /** Returns the unused part of `pots` to the store; resolves to how many had some. */
  private async returnPots(pots: Pot[]): Promise<number> {
    const items = [];
    for (const p of pots) {
      const amount = Math.floor(p.available);
      if (amount <= 0 || p.unlimited) continue;
      p.granted -= amount; // out of reach of admissions before the store hears of it
      items.push({ pot: p, amount });
    }
    if (!items.length) return 0;
    try {
      await this.db.call('agw_return', 'SELECT agw_return_v7($1, $2::jsonb)', [
        this.epoch,
        JSON.stringify(items.map(({ pot, amount }) => ({ pot: pot.name, kind: pot.kind, keyId: pot.params.keyId, limit: pot.params.limit, amount }))),
      ]);
      this.stats.returns++;
      return items.length;
    } catch (err) {
      if ((err as { code?: string }).code === LEASE_LOST) this.lost();
      else for (const { pot, amount } of items) pot.granted += amount; // still leased
      throw err;
    }
  }

  /**
   * The store reclaimed this daemon's slices (it was taken for dead): nothing leased
   * is ours any more. Calls in flight keep their holds, but their bookings name the old
   * epoch and are refused; new calls lease again under a new epoch.
   */
  private lost(): void {
    if (this.closed) return;
    this.stats.lost++;
    this.log.error({ epoch: this.epoch }, 'this daemon was taken for dead and its slices returned: starting over');
    this.epoch = newEpoch();
    this.validUntil = 0;
    for (const p of this.pots.values()) {
      p.granted = 0;
      p.pending = 0;
      p.unlimited = false;
      p.info = null;
    }
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await this.batcher.drain();
    this.closed = true;
    try {
      // give every slice back and leave: the same path as a reclaim, at once
      await this.db.call('agw_leave', 'UPDATE daemons SET expires_at = 0 WHERE id = $1', [this.epoch]);
      await this.db.call('agw_reclaim', 'SELECT agw_reclaim_v7() AS n', []);
    } catch (err) {
      this.log.warn({ err }, 'could not return the leases at shutdown: they come back when they expire');
    }
  }
}

/** Admission order of a call's pots: rate windows, then quota, budget and wallet. */
function rank(kind: PotKind): number {
  return kind === 'rpm' ? 0 : kind === 'tpm' ? 1 : kind === 'quota' ? 2 : kind === 'budget' ? 3 : 4;
}

function newEpoch(): string {
  return `d_${randomBytes(8).toString('hex')}`;
}
