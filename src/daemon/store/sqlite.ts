import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db, Param, Queryable, RunResult } from './db.js';
import type { Logger } from 'pino';
import { BookingJournal, lockDataDir } from '../money/sqlite/journal.js';
import { Ledger, type LedgerHost } from '../money/sqlite/ledger.js';
import { Checkpointer } from './sqlite-checkpointer.js';
import { GroupCommit, type GroupCommitStats } from './sqlite-group-commit.js';
import { WalIndexWatch } from './wal-index-watch.js';

type Stmt = Database.Statement<unknown[], unknown>;

/** Commits after which WAL checkpoints move to a worker thread (short-lived CLI runs never get one). */
const CHECKPOINTER_AFTER = 64;

function bind(params: Param[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) => (p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/**
 * SQLite through better-sqlite3: WAL with synchronous=NORMAL (a commit survives the
 * process being killed; only an OS crash or power loss can take back the last commits
 * not yet checkpointed), foreign keys, a busy timeout so an `agw admin` process and the
 * daemon can share the file, and a statement cache so every query is prepared once.
 *
 * Transactions go through group commit (sqlite-group-commit.ts): the `tx()` calls of one
 * event-loop turn share one COMMIT, each in its own savepoint, and every promise settles
 * after the COMMIT holding its work; a lone call commits at once. WAL checkpoints (the
 * copy into the database file, with fsyncs) run on a worker thread once the store has
 * seen some commits (sqlite-checkpointer.ts), not inside a COMMIT on the event loop.
 *
 * While a batch runs, the Db's own get/all/run/exec wait for its COMMIT (never seeing
 * uncommitted work). A tx fn must therefore use only the `q` it is given: calling the
 * outer Db from inside a fn waits for the fn's own batch, i.e. deadlocks (the Db contract
 * already forbids it).
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  readonly raw: Database.Database;
  /** null for ':memory:' */
  readonly checkpointer: Checkpointer | null;
  private readonly stmts = new Map<string, Stmt>();
  private readonly group: GroupCommit;
  /** the daemon's booking ledger (null: bookings are written by `tx` like any other work) */
  ledger: Ledger | null = null;
  private dirLock: { release(): void } | null = null;
  /** reads that do not wait for pending bookings (see Db.hot) */
  readonly hot: Queryable;
  /** the changes seen so far (see `version`) */
  private changes = 0;
  /** commits by any connection, from the WAL-index header; else PRAGMA data_version (other connections') */
  private readonly walIndex: WalIndexWatch | null;
  private readonly dataVersion: Stmt | null;
  private lastDataVersion = 0;

  constructor(private readonly file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.raw = new Database(file);
    this.raw.pragma('journal_mode = WAL');
    this.raw.pragma('synchronous = NORMAL');
    this.raw.pragma('foreign_keys = ON');
    this.raw.pragma('busy_timeout = 5000');
    this.raw.pragma('journal_size_limit = 67108864'); // a WAL grown by a burst is cut back to 64 MiB
    this.checkpointer =
      file === ':memory:' ? null : new Checkpointer(file, (pages) => this.raw.open && this.raw.pragma(`wal_autocheckpoint = ${pages}`));
    const inner: Queryable = {
      dialect: 'sqlite',
      get: async <T>(sql: string, params?: Param[]) => this.prep(sql).get(...bind(params)) as T | undefined,
      all: async <T>(sql: string, params?: Param[]) => this.prep(sql).all(...bind(params)) as T[],
      run: async (sql: string, params?: Param[]): Promise<RunResult> => ({ changes: this.prep(sql).run(...bind(params)).changes }),
    };
    this.group = new GroupCommit(
      this.raw,
      inner,
      (commits, bookingsOnly) => {
        if (!bookingsOnly) this.changes++;
        if (commits === CHECKPOINTER_AFTER) this.checkpointer?.start();
      },
      // this connection's booking batches are not changes to what the version guards
      { before: () => this.walIndex?.commits() ?? null, after: (before) => this.walIndex?.ownCommit(before) },
    );
    if (file !== ':memory:') {
      // a read transaction makes SQLite create the WAL-index (-shm) file of a store new to
      // WAL mode, so the watch has it from the first call on, not from the next start
      this.raw.prepare('SELECT count(*) FROM sqlite_master').get();
    }
    this.walIndex = file === ':memory:' ? null : WalIndexWatch.open(file);
    this.dataVersion = this.walIndex ? null : this.raw.prepare('PRAGMA data_version').pluck();
    if (this.dataVersion) this.lastDataVersion = this.dataVersion.get() as number;
    this.hot = {
      dialect: 'sqlite',
      get: async <T>(sql: string, params?: Param[]) => {
        await this.unlocked();
        return this.prep(sql).get(...bind(params)) as T | undefined;
      },
      all: async <T>(sql: string, params?: Param[]) => {
        await this.unlocked();
        return this.prep(sql).all(...bind(params)) as T[];
      },
      run: () => Promise.reject(new Error('Db.hot is for reads')),
    };
  }

  /**
   * Makes this the daemon's store: claims the data directory (one daemon per SQLite
   * store), applies the bookings a previous run left in the journal, and from now on
   * books gateway calls through the ledger. Returns how many bookings were replayed.
   */
  async openLedger(log?: Pick<Logger, 'error' | 'warn'>): Promise<number> {
    if (this.ledger) return 0;
    const memory = this.file === ':memory:';
    if (!memory) this.dirLock = lockDataDir(this.file);
    try {
      const self = this;
      const host: LedgerHost = {
        get locked() {
          return self.group.lock !== null;
        },
        unlocked: () => this.unlocked(),
        readNow: <T>(sql: string, params: Param[]) => this.prep(sql).get(...bind(params)) as T | undefined,
        txThen: (fn, after) => this.group.tx(fn, after, true),
        version: () => this.version(),
        walPath: `${this.file}-wal`,
      };
      // an in-memory store has no journal: its bookings are applied before a call answers
      const ledger = new Ledger(host, memory ? null : new BookingJournal(`${this.file}-bookings`), log);
      const replayed = await ledger.replay();
      this.ledger = ledger;
      return replayed;
    } catch (e) {
      this.dirLock?.release();
      this.dirLock = null;
      throw e;
    }
  }

  /** How many transactions shared how many commits. */
  get stats(): GroupCommitStats {
    return this.group.stats;
  }

  private prep(sql: string): Stmt {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.raw.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  /**
   * A number that changes whenever the store may have changed: a commit of this
   * connection with other work in it than bookings, a statement outside a transaction,
   * or a commit by any connection seen in the WAL-index header (an `agw admin` process).
   * This connection's own booking batches are not changes: the header moved by one of
   * them alone is taken as seen (WalIndexWatch.ownCommit), so the keys in memory stay
   * valid across them. Without that header, SQLite's data_version (other connections'
   * commits). In-memory copies of keys, tiers and wallets stay valid while it holds (the
   * ledger drops its admission rows itself when bookings reach the store).
   */
  version(): number {
    if (this.walIndex) {
      if (this.walIndex.changed()) this.changes++;
      return this.changes;
    }
    const dv = this.dataVersion!.get() as number;
    if (dv !== this.lastDataVersion) {
      this.lastDataVersion = dv;
      this.changes++;
    }
    return this.changes;
  }

  fileAccess(): ReturnType<NonNullable<Db['fileAccess']>> {
    return {
      walIndexHeader: this.walIndex ? (this.walIndex.isMapped ? 'mapped' : 'read') : 'data_version',
      bookingJournal: this.ledger?.journalAccess ?? 'none',
    };
  }

  /** Lets pending bookings reach the store first, so every read outside the hot path is exact. */
  private async settled(): Promise<void> {
    if (this.ledger?.hasPending) await this.ledger.drain().catch(() => undefined);
  }

  /** Waits until no transaction batch runs (its uncommitted work must not be read). */
  private async unlocked(): Promise<void> {
    while (this.group.lock) await this.group.lock;
  }

  async get<T>(sql: string, params?: Param[]): Promise<T | undefined> {
    await this.settled();
    return this.hot.get<T>(sql, params);
  }

  async all<T>(sql: string, params?: Param[]): Promise<T[]> {
    await this.settled();
    return this.hot.all<T>(sql, params);
  }

  async run(sql: string, params?: Param[]): Promise<RunResult> {
    await this.settled();
    await this.unlocked();
    this.changes++;
    return { changes: this.prep(sql).run(...bind(params)).changes };
  }

  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    await this.settled();
    return this.group.tx(fn);
  }

  async exec(sql: string): Promise<void> {
    await this.settled();
    await this.unlocked();
    this.changes++;
    this.raw.exec(sql);
  }

  /** Waits for every queued transaction to commit, stops the checkpointer, closes the file. */
  async close(): Promise<void> {
    await this.ledger?.close();
    while (this.group.busy) await (this.group.lock ?? new Promise((r) => setImmediate(r)));
    await this.checkpointer?.stop();
    this.walIndex?.close();
    if (this.raw.open) this.raw.close();
    this.dirLock?.release();
    this.dirLock = null;
  }
}
