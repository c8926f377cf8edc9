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

export interface Queryable {
  get<T = Row>(sql: string, params?: Param[]): Promise<T | undefined>;
  all<T = Row>(sql: string, params?: Param[]): Promise<T[]>;
  run(sql: string, params?: Param[]): Promise<RunResult>;
}

export interface Db extends Queryable {
  readonly dialect: 'sqlite' | 'postgres';
  /**
   * Runs `fn` in one transaction (SQLite: BEGIN IMMEDIATE, one writer at a time).
   * `fn` must use the `q` it is given, never the outer Db, and should not wait on
   * anything but the store (no network calls inside a transaction).
   */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  /** Runs a multi-statement script (migrations). */
  exec(sql: string): Promise<void>;
  close(): Promise<void>;
}
