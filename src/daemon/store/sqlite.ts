import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db, Param, Queryable, RunResult } from './db.js';

type Stmt = Database.Statement<unknown[], unknown>;

function bind(params: Param[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) => (p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/**
 * SQLite through better-sqlite3: WAL, foreign keys, a busy timeout so an `agw admin`
 * process and the daemon can share the file, and a statement cache so every query is
 * prepared once. Transactions are serialised by an in-process lock; while one is open
 * other callers wait for it (it holds only for the store work inside it).
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  readonly raw: Database.Database;
  private readonly stmts = new Map<string, Stmt>();
  private lock: Promise<void> | null = null;
  private readonly inner: Queryable;

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.raw = new Database(file);
    this.raw.pragma('journal_mode = WAL');
    this.raw.pragma('synchronous = NORMAL');
    this.raw.pragma('foreign_keys = ON');
    this.raw.pragma('busy_timeout = 5000');
    this.inner = {
      dialect: 'sqlite',
      get: async <T>(sql: string, params?: Param[]) => this.prep(sql).get(...bind(params)) as T | undefined,
      all: async <T>(sql: string, params?: Param[]) => this.prep(sql).all(...bind(params)) as T[],
      run: async (sql: string, params?: Param[]): Promise<RunResult> => {
        const r = this.prep(sql).run(...bind(params));
        return { changes: r.changes };
      },
    };
  }

  private prep(sql: string): Stmt {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.raw.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  async get<T>(sql: string, params?: Param[]): Promise<T | undefined> {
    while (this.lock) await this.lock;
    return this.prep(sql).get(...bind(params)) as T | undefined;
  }

  async all<T>(sql: string, params?: Param[]): Promise<T[]> {
    while (this.lock) await this.lock;
    return this.prep(sql).all(...bind(params)) as T[];
  }

  async run(sql: string, params?: Param[]): Promise<RunResult> {
    while (this.lock) await this.lock;
    return { changes: this.prep(sql).run(...bind(params)).changes };
  }

  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    while (this.lock) await this.lock;
    let release!: () => void;
    this.lock = new Promise<void>((r) => (release = r));
    try {
      this.raw.exec('BEGIN IMMEDIATE');
      try {
        const result = await fn(this.inner);
        this.raw.exec('COMMIT');
        return result;
      } catch (e) {
        if (this.raw.inTransaction) this.raw.exec('ROLLBACK');
        throw e;
      }
    } finally {
      this.lock = null;
      release();
    }
  }

  async exec(sql: string): Promise<void> {
    while (this.lock) await this.lock;
    this.raw.exec(sql);
  }

  async close(): Promise<void> {
    while (this.lock) await this.lock;
    if (this.raw.open) this.raw.close();
  }
}
