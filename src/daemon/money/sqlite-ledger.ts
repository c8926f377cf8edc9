import type { Logger } from 'pino';
import type { BookingJournal } from './journal.js';
import { applyBooking, applyBookings, type Booking } from './bookings.js';
import type { Param, Queryable } from '../store/db.js';
import type { WalletRow } from './wallets.js';

/** What the ledger needs from the SQLite Db that owns it. */
export interface LedgerHost {
  /** true while a transaction batch runs (its uncommitted work must not be read) */
  readonly locked: boolean;
  unlocked(): Promise<void>;
  /** a read on the connection, now (only while not locked) */
  readNow<T>(sql: string, params: Param[]): T | undefined;
  /** a transaction whose `afterCommit` runs synchronously right after its COMMIT */
  txThen<T>(fn: (q: Queryable) => Promise<T>, afterCommit: (value: T) => void): Promise<T>;
  /** the WAL file (synced before the journal is emptied) */
  readonly walPath: string;
  /** changes whenever the store may have changed other than by a booking (SqliteDb.version) */
  version(): number;
}

/** The wallet, the quota override and the quota counter of one call's admission, in one read. */
export type AdmissionRow = WalletRow & { quota_override: number | null; quota_used: number | null };

const ADMISSION_SQL = `SELECT w.*,
    (SELECT o.quota_limit FROM quota_overrides o WHERE o.user_id = w.user_id AND o.usage_type = ?) AS quota_override,
    (SELECT c.used FROM quota_counters c WHERE c.user_id = w.user_id AND c.usage_type = ? AND c.period_start = ?) AS quota_used
  FROM wallets w WHERE w.user_id = ?`;

/** Units held beyond the store for one (user, usage type, quota window). */
export interface Held {
  /** admitted and not settled yet */
  reserved: number;
  /** settled as finalized, in the journal, not applied yet */
  booked: number;
}

/** Bookings applied per transaction at most. */
const APPLY_BATCH = 512;
/** Pending bookings that make the applier run at once instead of after APPLY_DELAY_MS. */
const APPLY_NOW_AT = 256;
const APPLY_DELAY_MS = 20;
const RETRY_MS = 1000;
/** admission rows kept in memory at most (the map is emptied when full) */
const MAX_CACHED_ROWS = 10_000;
/** The journal is emptied once everything in it is applied and it has grown past this. */
const TRUNCATE_AT_BYTES = 8 * 1024 * 1024;

const keyOf = (userId: string, usageType: string, periodKey: string) => `${userId}\u0000${usageType}\u0000${periodKey}`;

/**
 * The SQLite daemon's money path (issue #9: the gateway adds well under a millisecond).
 * A metered call costs the store one read on the way in and one journal append on the
 * way out; its four writes (usage record, quota unit, rollup, wallet debit) are applied
 * in batches shortly after, many calls per COMMIT.
 *
 * - Admission (`admit`): the quota counter and the wallet are read in one query, and the
 *   units and debits held in memory are added: calls admitted and not settled
 *   (`reserved`), and calls settled but not applied (`booked`, `debits`). Read, check and
 *   hold happen in one synchronous step, so parallel calls cannot exceed a quota.
 * - Settling (`settle`): the booking is appended to the journal (one write(2)) before the
 *   answer goes out, then applied by the applier; a journal that cannot be written makes
 *   the call apply its booking in a transaction of its own before it returns.
 * - Applying: one transaction for up to APPLY_BATCH bookings; the held counts drop in the
 *   same synchronous step as the COMMIT, so no reader ever counts a call twice or not at
 *   all. Every other read of the Db first waits for the pending bookings to be applied
 *   (SqliteDb), so wallets, spend reports and quotas read through the API are exact.
 * - A crash loses nothing settled: the next daemon start applies the journal again
 *   (idempotent by usage id). Calls in flight at a crash were never booked and cost
 *   nothing, as with the orphan sweeper of the PostgreSQL path.
 */
export class Ledger {
  private readonly pending = new Map<string, Booking>();
  private readonly held = new Map<string, Held>();
  private readonly debits = new Map<string, number>();
  /** per user: the holds of calls admitted and not settled (their worst-case cost) */
  private readonly holds = new Map<string, { nano: number; calls: number }>();
  /** admission rows read before, valid while the store's version and the user's count hold */
  private readonly rows = new Map<string, { row: AdmissionRow | undefined; version: number; user: number }>();
  /** per user: bumped when a booking of theirs reaches the store (their cached row is stale) */
  private readonly userChanges = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private applying: Promise<void> | null = null;
  private closed = false;
  /** counters for tests and the benchmark */
  readonly stats = { appended: 0, applied: 0, commits: 0, directApplies: 0, truncations: 0 };

  constructor(
    private readonly host: LedgerHost,
    /** null: an in-memory store, whose bookings are applied before `settle` returns */
    private readonly journal: BookingJournal | null,
    private readonly log: Pick<Logger, 'error' | 'warn'> = console,
  ) {}

  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /**
   * Admits a call: `check` gets the admission row (undefined: no wallet, i.e. no user),
   * the units held beyond the store and the money spoken for beyond it (debits booked
   * but not applied, and the holds of calls in flight), and returns false to refuse or
   * the money to hold. Then one unit and that hold are kept for the call until its
   * `settle` (finalized or failed). `seenVersion`: a store version the caller read before
   * (its authentication); cached rows are checked against it instead of a fresh read of
   * the version, and a row read now is stamped with it (a row is never older than its
   * stamp).
   */
  async admit(
    userId: string,
    /** null: money only, no quota unit (a paid install) */
    usageType: string | null,
    periodKey: string,
    check: (row: AdmissionRow | undefined, heldUnits: number, pendingNano: number, heldNano: number) => number | false,
    seenVersion?: number,
  ): Promise<boolean> {
    while (this.host.locked) await this.host.unlocked();
    // from here to the end: synchronous, so no other admission or commit interleaves
    const key = keyOf(userId, usageType ?? '', periodKey);
    const version = seenVersion ?? this.host.version();
    let cached = this.rows.get(key);
    if (!cached || cached.version !== version || cached.user !== (this.userChanges.get(userId) ?? 0)) {
      if (this.rows.size >= MAX_CACHED_ROWS) {
        this.rows.clear();
        this.userChanges.clear(); // together: a stale row must never meet a counter that came back to its value
      }
      const row = this.host.readNow<AdmissionRow>(ADMISSION_SQL, [usageType, usageType, periodKey, userId]);
      this.rows.set(key, (cached = { row, version, user: this.userChanges.get(userId) ?? 0 }));
    }
    const row = cached.row;
    const h = this.held.get(key);
    const holds = this.holds.get(userId);
    const holdNano = check(row, h ? h.reserved + h.booked : 0, this.debits.get(userId) ?? 0, holds?.nano ?? 0);
    if (holdNano === false) return false;
    if (usageType === null) {
      // held until releaseMoney; no call settles it
    } else if (h) h.reserved++;
    else this.held.set(key, { reserved: 1, booked: 0 });
    if (holds) {
      holds.nano += holdNano;
      holds.calls++;
    } else this.holds.set(userId, { nano: holdNano, calls: 1 });
    return true;
  }

  /** The money held by a user's calls in flight, and how many there are. */
  heldBy(userId: string): { nano: number; calls: number } {
    const h = this.holds.get(userId);
    return h ? { nano: h.nano, calls: h.calls } : { nano: 0, calls: 0 };
  }

  /** Releases a call's hold (it settled: its booking, if any, now counts instead), or a money-only hold. */
  unholdMoney(userId: string, holdNano: number): void {
    const h = this.holds.get(userId);
    if (!h) return;
    h.nano -= holdNano;
    if (--h.calls <= 0) this.holds.delete(userId);
  }

  /**
   * Books a settled call: journal first (durable when this returns), then the applier.
   * Resolves at once, or after its own COMMIT when the journal cannot be written.
   */
  async settle(b: Booking): Promise<void> {
    if (this.pending.has(b.id)) return;
    const key = keyOf(b.userId, b.usageType, b.periodKey);
    try {
      if (!this.journal) throw new Error('no journal (an in-memory store)');
      this.journal.append(b);
    } catch (err) {
      if (this.journal) this.log.error({ err }, 'the booking journal cannot be written: booking the call directly in the store');
      this.stats.directApplies++;
      // the unit and the hold stay until the COMMIT that counts the call in the store
      await this.host.txThen(
        (q) => applyBooking(q, b),
        () => {
          if (b.status === 'refused') return;
          this.unhold(key, 'reserved');
          this.unholdMoney(b.userId, b.holdNano);
          this.touched(b.userId);
        },
      );
      return;
    }
    this.stats.appended++;
    this.pending.set(b.id, b);
    if (b.status === 'refused') return this.schedule(); // a record only: it held nothing
    this.unholdMoney(b.userId, b.holdNano);
    const h = this.held.get(key) ?? { reserved: 1, booked: 0 };
    h.reserved--;
    if (b.status === 'finalized') {
      h.booked++;
      if (b.customerNano) this.debits.set(b.userId, (this.debits.get(b.userId) ?? 0) + b.customerNano);
    }
    if (h.reserved + h.booked > 0) this.held.set(key, h);
    else this.held.delete(key);
    this.schedule();
  }

  /**
   * Applies every pending booking; resolves when they are committed, or when a pass made
   * no progress (the store refuses writes just now: logged, kept, retried; a reader then
   * goes on rather than hang).
   */
  async drain(): Promise<void> {
    while (this.pending.size && !this.closed) {
      const before = this.stats.applied;
      await (this.applying ??= this.applyPending().finally(() => (this.applying = null)));
      if (this.stats.applied === before) return;
    }
  }

  /**
   * Applies the bookings a previous process left in the journal (idempotent: those already
   * in the store are skipped) and empties it. Run once, before the daemon serves.
   */
  async replay(): Promise<number> {
    if (!this.journal) return 0;
    const left = this.journal.readAll();
    let applied = 0;
    for (let i = 0; i < left.length; i += APPLY_BATCH) {
      const batch = left.slice(i, i + APPLY_BATCH);
      applied += await this.host.txThen(
        async (q) => {
          let n = 0;
          for (const b of batch) {
            try {
              if (await applyBooking(q, b)) n++;
            } catch (err) {
              if (!isGone(err)) throw err;
              this.log.warn({ usageId: b.id }, 'journal booking of a deleted account dropped');
            }
          }
          return n;
        },
        () => undefined,
      );
    }
    if (left.length || this.journal.size) this.journal.truncate(this.host.walPath);
    return applied;
  }

  /** Applies what is pending, stops the timer; later settles apply directly. */
  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.journal && !this.pending.size && this.journal.size) this.journal.truncate(this.host.walPath);
    this.journal?.close();
  }

  private schedule(): void {
    if (this.closed || this.applying) return;
    if (this.pending.size >= APPLY_NOW_AT) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      setImmediate(() => void this.drain().catch(() => undefined));
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.drain().catch(() => undefined);
      }, APPLY_DELAY_MS);
      this.timer.unref();
    }
  }

  private async applyPending(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = [...this.pending.values()].slice(0, APPLY_BATCH);
    try {
      // the common case: the whole batch in one transaction
      await this.host.txThen(
        (q) => applyBookings(q, batch),
        () => {
          for (const b of batch) this.applied(b);
          this.stats.commits++;
        },
      );
    } catch {
      // one booking refuses (e.g. its account was deleted) or the store failed: one by one
      const outcomes = await Promise.allSettled(batch.map((b) => this.host.txThen((q) => applyBooking(q, b), () => this.applied(b))));
      outcomes.forEach((o, i) => {
        if (o.status === 'fulfilled') return;
        if (isGone(o.reason)) {
          this.log.warn({ usageId: batch[i].id }, 'booking of a deleted account dropped');
          this.applied(batch[i]);
          return;
        }
        this.log.error({ err: o.reason, usageId: batch[i].id }, 'applying a booking failed: kept in the journal, retried');
      });
      if (this.pending.size && batch.some((b) => this.pending.has(b.id))) {
        // a store that cannot write now: retry later instead of spinning
        await new Promise((r) => setTimeout(r, RETRY_MS).unref());
        if (this.closed) return;
      }
    }
    if (this.journal && !this.pending.size && this.journal.size > TRUNCATE_AT_BYTES) {
      this.journal.truncate(this.host.walPath);
      this.stats.truncations++;
    }
    if (this.pending.size) this.schedule();
  }

  /** Counts one applied booking out of what is held in memory (runs right after its COMMIT). */
  private applied(b: Booking): void {
    if (!this.pending.delete(b.id)) return;
    this.stats.applied++;
    if (b.status === 'refused') return;
    this.touched(b.userId);
    if (b.status !== 'finalized') return;
    this.unhold(keyOf(b.userId, b.usageType, b.periodKey), 'booked');
    if (b.customerNano) {
      const left = (this.debits.get(b.userId) ?? 0) - b.customerNano;
      if (left > 0) this.debits.set(b.userId, left);
      else this.debits.delete(b.userId);
    }
  }

  private touched(userId: string): void {
    this.userChanges.set(userId, (this.userChanges.get(userId) ?? 0) + 1);
  }

  private unhold(key: string, what: keyof Held): void {
    const h = this.held.get(key);
    if (!h) return;
    h[what] = Math.max(0, h[what] - 1);
    if (h.reserved + h.booked === 0) this.held.delete(key);
  }
}

/** A booking whose account no longer exists (deleted with its records: nothing to bill). */
function isGone(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || /wallet of .* missing/.test(String((err as Error | null)?.message));
}
