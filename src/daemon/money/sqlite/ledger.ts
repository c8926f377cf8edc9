import type { Logger } from 'pino';
import type { BookingJournal } from './journal.js';
import { applyBooking, applyBookings, type Booking } from '../bookings.js';
import type { Param, Queryable } from '../../store/db.js';
import type { WalletRow } from '../wallets.js';
import { bookedOf, Spoken, type PotAmount } from './spoken.js';
import { markPhase } from '../../telemetry/phases.js';

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

/**
 * The wallet, the quota override and counter of one call's admission, in one read, and
 * what each budgeted key the call counts against spent in its period (`keySpent`, in the
 * order of the admission's keys).
 */
export type AdmissionRow = WalletRow & { quota_override: number | null; quota_used: number | null; keySpent: number[] };

const ADMISSION_SQL = `SELECT w.*,
    (SELECT o.quota_limit FROM quota_overrides o WHERE o.user_id = w.user_id AND o.usage_type = ?) AS quota_override,
    (SELECT c.used FROM quota_counters c WHERE c.user_id = w.user_id AND c.usage_type = ? AND c.period_start = ?) AS quota_used
  FROM wallets w WHERE w.user_id = ?`;
const KEY_SPENT_SQL = 'SELECT spent_nusd AS n FROM key_spend WHERE key_id = ? AND period = ?';

/** A key's budget period an admission also reads (its spend so far). */
export interface KeyPeriod {
  keyId: string;
  period: string;
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

const rowKey = (userId: string, usageType: string, periodKey: string, keys: readonly KeyPeriod[]) =>
  `${userId}\u0000${usageType}\u0000${periodKey}${keys.map((k) => `\u0000${k.keyId}\u0000${k.period}`).join('')}`;

/**
 * The SQLite daemon's money path (issue #9: the gateway adds well under a millisecond).
 * A metered call costs the store one read on the way in and one journal append on the
 * way out; its four writes (usage record, quota unit, rollup, wallet debit) are applied
 * in batches shortly after, many calls per COMMIT.
 *
 * - Admission (`admit`): the quota counter, the wallet and the key's spend are read in one
 *   query, and what is spoken for in memory is added (spoken.ts: the holds of calls
 *   admitted and not settled, and what settled calls booked but did not apply yet).
 *   Read, check and hold happen in one synchronous step, so parallel calls cannot exceed
 *   a quota, a wallet or a key's budget.
 * - Settling (`settle`): the booking is appended to the journal before the answer goes
 *   out (the bookings of one turn of the event loop in one write(2); a call alone at
 *   once), then applied by the
 *   applier; a journal that cannot be written makes the call apply its booking in a
 *   transaction of its own before it returns.
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
  /** settled this turn of the event loop, not in the journal yet (`flush`) */
  private queued: { b: Booking; resolve: () => void; reject: (err: unknown) => void }[] = [];
  /** holds of calls in flight and bookings not applied, per pot */
  readonly spoken = new Spoken();
  /**
   * Admission rows read before, valid while the store's version holds and no booking
   * reached the store since (`touched` empties it: the version does not move for the
   * daemon's own booking batches, and a key's budget may be counted in other users' rows).
   */
  private readonly rows = new Map<string, { row: AdmissionRow | undefined; version: number }>();
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

  /** How the journal's lines reach the file: copied into a mapping, written with write(2), or no journal (an in-memory store). */
  get journalAccess(): 'mapped' | 'written' | 'none' {
    return this.journal ? (this.journal.isMapped ? 'mapped' : 'written') : 'none';
  }

  get hasPending(): boolean {
    return this.pending.size > 0;
  }

  /**
   * Admits a call: `check` gets the admission row (undefined: no wallet, i.e. no user)
   * and what is spoken for beyond the store (`this.spoken`), and returns the call's
   * holds, or false to refuse. The holds are kept under the call's usage `id` until its
   * `settle` (or `release`). `seenVersion`: a store version the caller read before (its
   * authentication); cached rows are checked against it instead of a fresh read of the
   * version, and a row read now is stamped with it (a row is never older than its stamp).
   */
  async admit(
    id: string,
    userId: string,
    /** null: money only, no quota (a paid install) */
    usageType: string | null,
    periodKey: string,
    keys: readonly KeyPeriod[],
    check: (row: AdmissionRow | undefined, spoken: Spoken) => readonly PotAmount[] | false,
    seenVersion?: number,
  ): Promise<boolean> {
    while (this.host.locked) await this.host.unlocked();
    // from here to the end: synchronous, so no other admission or commit interleaves
    const cacheKey = rowKey(userId, usageType ?? '', periodKey, keys);
    const version = seenVersion ?? this.host.version();
    let cached = this.rows.get(cacheKey);
    if (!cached || cached.version !== version) {
      if (this.rows.size >= MAX_CACHED_ROWS) this.rows.clear();
      const row = this.host.readNow<AdmissionRow>(ADMISSION_SQL, [usageType ?? '', usageType ?? '', periodKey, userId]);
      if (row) row.keySpent = keys.map((k) => Number(this.host.readNow<{ n: number }>(KEY_SPENT_SQL, [k.keyId, k.period])?.n ?? 0));
      this.rows.set(cacheKey, (cached = { row, version }));
    }
    const holds = check(cached.row, this.spoken);
    if (holds === false) return false;
    this.spoken.take(id, holds);
    return true;
  }

  /**
   * Releases the holds of an admission no booking settles (a paid install's, after its
   * transaction). `changed`: that transaction moved the user's money, so admissions read
   * the row again instead of a cached one stamped with an older authentication's version
   * (until now the hold stood in for the debit).
   */
  release(id: string, changed?: string): void {
    this.spoken.settle(id, []);
    if (changed !== undefined) this.touched();
  }

  /**
   * Books a settled call: journal first (durable when this resolves), then the applier.
   * The bookings settled in one turn of the event loop share one journal write, made in
   * the turn's check phase (setImmediate), before any of their answers goes out; their
   * holds stand until then. The only call in flight has nobody to share with: its line is
   * written at once (a sequential caller does not wait a turn). Resolves after that write,
   * or after the call's own COMMIT when the journal cannot be written.
   */
  settle(b: Booking): Promise<void> {
    if (this.pending.has(b.id) || this.queued.some((q) => q.b.id === b.id)) return Promise.resolve();
    if (!this.journal) return this.applyDirect(b);
    return new Promise((resolve, reject) => {
      this.queued.push({ b, resolve, reject });
      if (this.queued.length > 1) return;
      // the only call in flight: none can settle in this turn to share the write, so no wait for the check phase
      if (this.spoken.inFlight <= 1) this.flush();
      else setImmediate(() => this.flush());
    });
  }

  /** Writes the queued bookings to the journal in one write(2) and hands them to the applier. */
  private flush(): void {
    const queued = this.queued;
    if (!queued.length) return;
    this.queued = [];
    try {
      if (this.closed || !this.journal) throw new Error('the ledger is closed');
      this.journal.append(queued.map((q) => q.b));
    } catch (err) {
      if (!this.closed) this.log.error({ err }, 'the booking journal cannot be written: booking the calls directly in the store');
      for (const q of queued) this.applyDirect(q.b).then(q.resolve, q.reject);
      return;
    }
    // outside the try: once the lines are written nothing may send these bookings down the direct path as well
    markPhase('journaled');
    for (const { b, resolve } of queued) {
      this.stats.appended++;
      this.pending.set(b.id, b);
      // the holds go; what the call booked counts instead until it is applied (a refused call: nothing)
      this.spoken.settle(b.id, bookedOf(b));
      resolve();
    }
    this.schedule();
  }

  /** A booking the journal cannot take, in a transaction of its own; its holds stay until that COMMIT. */
  private async applyDirect(b: Booking): Promise<void> {
    this.stats.directApplies++;
    try {
      await this.host.txThen(
        (q) => applyBooking(q, b),
        () => {
          this.spoken.settle(b.id, []);
          if (b.status !== 'refused') this.touched();
        },
      );
    } catch (err) {
      // not booked at all (the call is answered with an error): its holds go, or they
      // would keep the wallet's funds out of reach until the daemon restarts
      this.spoken.settle(b.id, []);
      throw err;
    }
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
    this.flush();
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
    this.touched();
    this.spoken.applied(bookedOf(b));
  }

  /** Money moved in the store: every admission row read before may be stale (see `rows`). */
  private touched(): void {
    this.rows.clear();
  }

}

/** A booking whose account no longer exists (deleted with its records: nothing to bill). */
function isGone(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || /wallet of .* missing/.test(String((err as Error | null)?.message));
}
