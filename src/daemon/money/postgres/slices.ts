import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { PgDb } from '../../store/postgres.js';
import { LEASE_LOST } from './batches.js';
import { Pot, userOfPot, type Need, type PotInfo, type PotKind, type PotParams } from './pots.js';

/** What agw_lease_v7 answers for one pot: its figures (PotInfo, `level` for a bucket) and the grant. */
type LeaseAnswer = Partial<Omit<PotInfo, 'leasedByOthers'>> & {
  pot: string;
  granted?: number;
  missing?: boolean;
  unlimited?: boolean;
  level?: number;
  /** what all daemons together have leased of it, this grant included */
  leased?: number;
};

/** Timing of the lease protocol (config gateway.leaseTtlMs; the rest follows from it). */
export interface LeaseTiming {
  /** a daemon's slices are reclaimed this long after its last heartbeat */
  ttlMs: number;
  heartbeatMs: number;
  /** a slice unused this long goes back to the store */
  idleMs: number;
  /** how long a short admission waits for peers to return slices */
  recallWaitMs: number;
  /** a pot no admission asked for this long, holding nothing, is forgotten */
  forgetMs: number;
}

export function leaseTiming(ttlMs: number): LeaseTiming {
  const idleMs = Math.min(2000, Math.max(200, Math.floor(ttlMs / 5)));
  return { ttlMs, heartbeatMs: Math.max(100, Math.floor(ttlMs / 5)), idleMs, recallWaitMs: 150, forgetMs: 10 * idleMs };
}

/**
 * One daemon's slices of the shared pots, and the protocol that keeps them (PostgreSQL):
 * leasing (agw_lease_v7, one round trip for what a pot's queue lacks), returning what is
 * idle or asked for by a peer (NOTIFY agw_recall), the heartbeat that extends them
 * (agw_alive_v7) and returns expired peers' (agw_reclaim_v7), and starting over under a
 * new epoch when the store took this daemon for dead. The engine (postgres/engine.ts) admits
 * and settles against `pots`.
 */
export class Slices {
  readonly pots = new Map<string, Pot>();
  private readonly waiters = new Map<string, Set<() => void>>();
  private timers: NodeJS.Timeout[] = [];
  /** this daemon's current identity in the store (a new one after its slices were reclaimed) */
  epoch = newEpoch();
  /** leases may be used until then (local clock: the last heartbeat sent + TTL − a margin) */
  validUntil = 0;
  private heartbeat: Promise<void> | null = null;
  /** the epoch the store has a row for */
  private registered = '';
  closed = false;
  readonly stats = { leases: 0, returns: 0, recalls: 0, lost: 0 };

  constructor(
    private readonly db: PgDb,
    private readonly log: Pick<Logger, 'error' | 'warn' | 'info'>,
    readonly timing: LeaseTiming,
  ) {}

  /** Registers the daemon, listens to its peers and starts the heartbeat and idle returns. */
  async start(): Promise<void> {
    await this.register();
    await this.db.listen('agw_recall', (p) => this.onRecall(p));
    await this.db.listen('agw_returned', (p) => this.wake(p));
    await this.db.listen('agw_changed', (p) => this.onChanged(p));
    this.db.onReset(() => this.onChanged('*'));
    this.timers.push(setInterval(() => void this.beat().catch(() => undefined), this.timing.heartbeatMs));
    this.timers.push(setInterval(() => void this.returnIdle().catch(() => undefined), this.timing.idleMs));
    for (const t of this.timers) t.unref();
  }

  /** Gives every slice back and leaves: the same path as a reclaim, at once. */
  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.closed = true;
    try {
      await this.db.call('agw_leave', 'UPDATE daemons SET expires_at = 0 WHERE id = $1', [this.epoch]);
      await this.db.call('agw_reclaim', 'SELECT agw_reclaim_v7() AS n', []);
    } catch (err) {
      this.log.warn({ err }, 'could not return the leases at shutdown: they come back when they expire');
    }
  }

  private call<T extends Record<string, unknown>>(name: string, sql: string, params: unknown[]): Promise<T[]> {
    return retrying(() => this.db.call<T>(name, sql, params));
  }

  /** The pot of this name (every admission takes its pots from here; see `forget`). */
  pot(kind: PotKind, name: string, params: PotParams): Pot {
    let p = this.pots.get(name);
    if (!p) this.pots.set(name, (p = new Pot(name, kind, params)));
    else p.params = params; // the tier's allowance or limit as of this call
    p.touched = Date.now();
    return p;
  }

  /** One lease of one pot (a prefetch, or what waiting admissions lack); resolves to the grant. */
  leaseOne(p: Pot, need: number, least: number, want: number): Promise<number> {
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
      const [row] = await this.call<{ a: LeaseAnswer[] }>('agw_lease', 'SELECT agw_lease_v7($1, $2::jsonb) AS a', [epoch, JSON.stringify(reqs)]);
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
      if ((err as { code?: string }).code === LEASE_LOST) this.lost(epoch);
      throw err;
    }
  }

  /**
   * Asks the other daemons to return their unused slices of a pot that is short here,
   * and waits a moment for one to say it did. False when no other daemon has leased
   * enough of it to make up the shortfall (nothing to wait for).
   */
  async recall(short: Need): Promise<boolean> {
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

  async register(): Promise<void> {
    const sent = Date.now();
    const epoch = this.epoch;
    await this.db.call('agw_register', 'INSERT INTO daemons (id, started_at, expires_at) VALUES ($1, $2::bigint, $2::bigint + $3::bigint)', [epoch, sent, this.timing.ttlMs]);
    if (epoch !== this.epoch) return; // lost again meanwhile
    this.registered = epoch;
    this.validUntil = sent + this.timing.ttlMs - Math.floor(this.timing.ttlMs / 4);
  }

  /** Extends this daemon's leases (and publishes its wallets' holds); returns expired peers' slices. */
  beat(): Promise<void> {
    this.heartbeat ??= (async () => {
      const sent = Date.now();
      const held = [];
      for (const p of this.pots.values()) {
        if (p.kind !== 'wallet' || !p.heldDirty) continue;
        p.heldDirty = false;
        held.push({ pot: p.name, held: p.held, calls: p.calls });
      }
      if (this.registered !== this.epoch) await this.register(); // after a loss found by a booking or a lease
      const epoch = this.epoch;
      const [row] = await this.call<{ ok: boolean }>('agw_alive', 'SELECT agw_alive_v7($1, $2, $3::jsonb) AS ok', [epoch, this.timing.ttlMs, JSON.stringify(held)]);
      if (!row.ok) {
        this.lost(epoch);
        await this.register();
      } else if (epoch === this.epoch) this.validUntil = sent + this.timing.ttlMs - Math.floor(this.timing.ttlMs / 4);
      try {
        const [r] = await this.call<{ n: number }>('agw_reclaim', 'SELECT agw_reclaim_v7() AS n', []);
        if (r.n > 0) this.log.warn({ daemons: r.n }, 'returned the slices of daemons that stopped');
      } catch (err) {
        this.log.warn({ err }, 'could not return the slices of stopped daemons: the next heartbeat tries again');
      }
    })().finally(() => (this.heartbeat = null));
    return this.heartbeat;
  }

  /** Returns the unused part of pots not used for a while, and forgets pots long idle and empty (a daemon meets many users, keys and periods). */
  private async returnIdle(): Promise<number> {
    const now = Date.now();
    const before = now - this.timing.idleMs;
    const n = await this.returnPots([...this.pots.values()].filter((p) => p.lastUse < before && p.available > 0 && !p.leasing));
    this.forget(now - this.timing.forgetMs);
    return n;
  }

  /**
   * Drops the pots no admission took since `before` that hold nothing: nothing leased,
   * held, pending, queued or unpublished. An admission holds its pots' objects only while
   * it runs (seconds at most), a call in flight counts in `calls`, so no one still has a
   * dropped object; the next admission makes a fresh one.
   */
  private forget(before: number): void {
    for (const [name, p] of this.pots) {
      if (p.touched >= before || p.granted > 0 || p.held !== 0 || p.calls !== 0 || p.pending !== 0) continue;
      const unpublished = p.kind === 'wallet' && p.heldDirty; // wallets publish their holds with the heartbeat
      if (!p.leasing && !p.queue.length && !p.draining && !unpublished) this.pots.delete(name);
    }
  }

  /** Returns the unused part of `pots` to the store; resolves to how many had some. */
  async returnPots(pots: Pot[]): Promise<number> {
    const items = [];
    for (const p of pots) {
      const amount = Math.floor(p.available);
      if (amount <= 0 || p.unlimited) continue;
      p.granted -= amount; // out of reach of admissions before the store hears of it
      items.push({ pot: p, amount });
    }
    if (!items.length) return 0;
    const epoch = this.epoch;
    try {
      await this.call('agw_return', 'SELECT agw_return_v7($1, $2::jsonb)', [
        epoch,
        JSON.stringify(items.map(({ pot, amount }) => ({ pot: pot.name, kind: pot.kind, keyId: pot.params.keyId, limit: pot.params.limit, amount }))),
      ]);
      this.stats.returns++;
      return items.length;
    } catch (err) {
      if ((err as { code?: string }).code === LEASE_LOST) this.lost(epoch);
      else if (epoch === this.epoch) for (const { pot, amount } of items) pot.granted += amount; // still leased
      throw err;
    }
  }

  /**
   * The store reclaimed the slices of `epoch` (this daemon was taken for dead): nothing
   * leased is ours any more. Calls in flight keep their holds; their bookings are booked
   * again under the new epoch, consuming no slice (postgres/engine.ts settle). New calls lease
   * again once the new epoch is registered (the next heartbeat, or an admission's).
   * A refusal naming an epoch already left behind changes nothing.
   */
  lost(epoch: string): void {
    if (this.closed || epoch !== this.epoch) return;
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
}

/** A store call of the lease protocol, tried again when PostgreSQL aborted it for a deadlock or a serialization failure (each is one transaction). */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if ((code !== '40P01' && code !== '40001') || attempt >= 4) throw err;
      await new Promise((r) => setTimeout(r, 10 * attempt + Math.random() * 20));
    }
  }
}

function newEpoch(): string {
  return `d_${randomBytes(8).toString('hex')}`;
}
