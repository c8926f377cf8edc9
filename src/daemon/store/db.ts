/**
 * The store's one seam between route code and a database engine. Repositories (the
 * other files in this folder) speak only this interface and portable SQL (`?`
 * placeholders, `RETURNING`, `ON CONFLICT`), so a PostgreSQL backend can stand beside
 * the SQLite one without any route code knowing.
 */
export type Row = Record<string, unknown>;
export type Param = string | number | bigint | boolean | null | undefined | Buffer;

export interface RunResult {
  changes: number;
}

export type Dialect = 'sqlite' | 'postgres';

export interface Queryable {
  /** Which engine runs the SQL (the Db and every transaction handle say it). */
  readonly dialect: Dialect;
  get<T = Row>(sql: string, params?: Param[]): Promise<T | undefined>;
  all<T = Row>(sql: string, params?: Param[]): Promise<T[]>;
  run(sql: string, params?: Param[]): Promise<RunResult>;
}

export interface Db extends Queryable {
  /**
   * Runs `fn` in one transaction (SQLite: BEGIN IMMEDIATE, one writer at a time;
   * PostgreSQL: READ COMMITTED, so a read-modify-write must lock its rows with
   * `forUpdate(q)` or be one conditional UPDATE). `fn` must use the `q` it is given,
   * never the outer Db, and should not wait on anything but the store (no network
   * calls inside a transaction). PostgreSQL may run `fn` again after a serialization
   * failure or deadlock, so `fn` must not have effects outside the store.
   */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
  /**
   * Reads for the gateway's hot path that need not wait for booked calls to be applied
   * (SQLite's ledger, money/sqlite/ledger.ts): only for tables a booking never writes (keys,
   * users, organizations). Absent = the Db itself.
   */
  readonly hot?: Queryable;
  /**
   * A number that changes whenever the store may have changed other than by a gateway
   * booking, for in-memory copies (auth/key-cache.ts). Absent = no such promise (several
   * daemons write to PostgreSQL): ask the store every time.
   */
  version?(): number;
  /**
   * How the daemon reaches the store's own files (SQLite): the WAL-index header (`mapped`,
   * `read` with pread(2), or `data_version` without one) and the booking journal (`mapped`,
   * `written` with write(2), or `none`). The 'listening' log line carries it.
   */
  fileAccess?(): { walIndexHeader: 'mapped' | 'read' | 'data_version'; bookingJournal: 'mapped' | 'written' | 'none' };
}

/**
 * ` FOR UPDATE` on PostgreSQL, nothing on SQLite (whose transactions already hold the
 * one write lock). Append it to a SELECT whose rows the transaction will rewrite from
 * what it read, so concurrent transactions on other daemons wait instead of losing an
 * update.
 */
export function forUpdate(q: Queryable): string {
  return q.dialect === 'postgres' ? ' FOR UPDATE' : '';
}
