import type Database from 'better-sqlite3';
import type { Queryable } from './db.js';

/** One pending `tx()` call: its function and the promise it settles once its batch committed. */
interface Member {
  fn: (q: Queryable) => Promise<unknown>;
  /** run synchronously right after the COMMIT that holds the fn's work (before anything else can read) */
  afterCommit?: (value: unknown) => void;
  /** the fn writes only gateway bookings (usage, quota counters, rollup, wallets): see `onCommit` */
  booking?: boolean;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * What watches the store for commits (store/wal-index-watch.ts) told of this connection's
 * own bookings-only commits, so they do not count as changes: `before()` reads the commit
 * counter while the batch holds the write lock (no other connection can commit then),
 * `after(before)` looks right after the COMMIT.
 */
export interface OwnCommits {
  before(): number | null;
  after(before: number): void;
}
type Stmt = Database.Statement<unknown[], unknown>;

/** The most `tx()` calls one commit carries; the rest wait for the next one. */
const MAX_BATCH = 512;

/** Counters for tests and the benchmark: how many transactions shared how many commits. */
export interface GroupCommitStats {
  commits: number;
  txs: number;
  largestBatch: number;
}

/**
 * Group commit for one better-sqlite3 connection: the `tx()` calls pending together run
 * inside ONE `BEGIN IMMEDIATE … COMMIT`, each in its own SAVEPOINT, so a failing fn rolls
 * back only its own work (and only its promise rejects). Every promise settles after the
 * COMMIT that holds its work: no acknowledged write can be lost, and a crash cannot split
 * one fn's work. Fns run one after another in call order. `lock` is set while a batch
 * runs (the Db's own reads wait on it, so nothing outside sees uncommitted work).
 */
export class GroupCommit {
  readonly stats: GroupCommitStats = { commits: 0, txs: 0, largestBatch: 0 };
  lock: Promise<void> | null = null;
  private readonly ctl: Record<'begin' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Stmt>;
  private queue: Member[] = [];
  private scheduled = false;
  private gathering = false;
  private turnCommits = 0;

  constructor(
    private readonly raw: Database.Database,
    private readonly q: Queryable,
    /** after every COMMIT; `bookingsOnly` when every fn in it was a booking */
    private readonly onCommit: (commits: number, bookingsOnly: boolean) => void,
    /** told of a bookings-only COMMIT: `before` is read under the write lock, `after` right after the COMMIT */
    private readonly own?: OwnCommits,
  ) {
    const p = (sql: string) => raw.prepare(sql);
    this.ctl = {
      begin: p('BEGIN IMMEDIATE'),
      commit: p('COMMIT'),
      rollback: p('ROLLBACK'),
      savepoint: p('SAVEPOINT agw_tx'),
      release: p('RELEASE agw_tx'),
      rollbackTo: p('ROLLBACK TO agw_tx'),
    };
  }

  tx<T>(fn: (q: Queryable) => Promise<T>, afterCommit?: (value: T) => void, booking = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, afterCommit: afterCommit as ((v: unknown) => void) | undefined, booking, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** True while calls are queued or a batch runs. */
  get busy(): boolean {
    return this.lock !== null || this.scheduled || this.queue.length > 0;
  }

  /**
   * When to run the queued calls. Eager (a lone caller, the common case at low load): at
   * the end of the current microtask run, so a call waits for nothing. Gather (calls come
   * from several I/O callbacks of one loop turn, i.e. there is load): on setImmediate,
   * after the turn's I/O callbacks have queued theirs. Eager turns into gather when a
   * second batch would commit in the same loop turn; a gathered batch of one turns it back.
   */
  private schedule(): void {
    if (this.scheduled || this.lock || !this.queue.length) return;
    this.scheduled = true;
    if (this.gathering) setImmediate(this.runGathered);
    else queueMicrotask(this.runEager);
  }

  private readonly runEager = (): void => {
    if (this.turnCommits > 0) {
      this.gathering = true;
      setImmediate(this.runGathered);
      return;
    }
    this.scheduled = false;
    void this.flush();
  };

  private readonly runGathered = (): void => {
    this.scheduled = false;
    void this.flush();
  };

  /** Runs the queued fns as one transaction, then settles their promises. */
  private async flush(): Promise<void> {
    if (this.lock || !this.queue.length) return;
    const batch = this.queue.length > MAX_BATCH ? this.queue.splice(0, MAX_BATCH) : this.queue;
    if (batch === this.queue) this.queue = [];
    let release!: () => void;
    this.lock = new Promise<void>((r) => (release = r));
    let settled: [Member, Outcome][];
    try {
      settled = await this.runBatch(batch);
    } catch (error) {
      settled = batch.map((m) => [m, { ok: false, error }]);
    } finally {
      this.lock = null;
      release();
    }
    if (this.gathering) {
      if (batch.length === 1) this.gathering = false;
    } else if (this.turnCommits++ === 0) {
      setImmediate(() => (this.turnCommits = 0)); // counts eager commits until the loop's next check phase
    }
    for (const [m, o] of settled) {
      if (o.ok) m.resolve(o.value);
      else m.reject(o.error);
    }
    this.schedule();
  }

  /**
   * Runs every member in its own savepoint (none for a batch of one) and commits; returns
   * the members to settle with their outcomes. When an error makes SQLite roll back the
   * whole transaction (SQLITE_FULL, an I/O error), only the member that hit it fails: the
   * others go back to the front of the queue and run again in the next batch (the Db
   * contract allows re-running a fn: PostgreSQL does after a serialization failure).
   */
  private async runBatch(batch: Member[]): Promise<[Member, Outcome][]> {
    this.ctl.begin.run();
    const solo = batch.length === 1;
    const out: [Member, Outcome][] = [];
    for (let i = 0; i < batch.length; i++) {
      const m = batch[i];
      if (!solo) this.ctl.savepoint.run();
      try {
        const value = await m.fn(this.q);
        if (!this.raw.inTransaction) throw new Error('the transaction was rolled back by an error inside it');
        if (!solo) this.ctl.release.run();
        out.push([m, { ok: true, value }]);
      } catch (error) {
        if (!this.raw.inTransaction) {
          this.queue.unshift(...batch.slice(0, i), ...batch.slice(i + 1));
          return [[m, { ok: false, error }]];
        }
        if (solo) this.ctl.rollback.run();
        else {
          this.ctl.rollbackTo.run();
          this.ctl.release.run();
        }
        out.push([m, { ok: false, error }]);
      }
    }
    if (this.raw.inTransaction) {
      const bookingsOnly = batch.every((m) => m.booking);
      const before = bookingsOnly && this.own ? this.own.before() : null;
      try {
        this.ctl.commit.run();
      } catch (error) {
        if (this.raw.inTransaction) this.ctl.rollback.run();
        throw error;
      }
      if (before !== null) {
        try {
          this.own!.after(before);
        } catch {
          /* must not throw after a COMMIT: the next look at the store reports the commit as a change */
        }
      }
      this.onCommit(++this.stats.commits, bookingsOnly);
      for (const [m, o] of out) {
        if (!o.ok || !m.afterCommit) continue;
        try {
          m.afterCommit(o.value);
        } catch {
          /* must not throw: the work is committed whatever it does */
        }
      }
    }
    this.stats.txs += batch.length;
    if (batch.length > this.stats.largestBatch) this.stats.largestBatch = batch.length;
    return out;
  }
}
