import pg from 'pg';
import type { Db, Dialect, Param, Queryable, Row, RunResult } from './db.js';
import { poolSettings, toPgPlaceholders, type PgPoolSettings } from './pg-sql.js';

/** int8 (COUNT, BIGINT columns) and numeric (SUM of BIGINT) come back as JS numbers. */
const INT8 = 20;
const NUMERIC = 1700;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8 || oid === NUMERIC) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
} as unknown as pg.CustomTypesConfig;

/** SQLSTATEs after which a transaction is retried from the start. */
const RETRYABLE = new Set(['40001', '40P01']); // serialization_failure, deadlock_detected
const TX_ATTEMPTS = 6;
const SQL_CACHE_MAX = 2000;

function bind(params: Param[] | undefined): unknown[] {
  if (!params) return [];
  return params.map((p) =>
    p === undefined ? null : typeof p === 'boolean' ? (p ? 1 : 0) : typeof p === 'bigint' ? p.toString() : p,
  );
}

type Client = pg.Pool | pg.PoolClient;

/**
 * PostgreSQL through node-postgres: one pool per daemon (limits and timeouts from the
 * store URL, see pg-sql.ts), the store's `?` SQL rewritten once per statement text,
 * transactions on one dedicated pooled connection, retried on serialization failures
 * and deadlocks. Several daemons on one database share nothing but the database, so
 * every cross-daemon guarantee comes from it: row locks, conditional updates, unique
 * constraints.
 */
export class PgDb implements Db {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;
  readonly settings: PgPoolSettings;
  private readonly texts = new Map<string, string>();
  private readonly outer: Queryable;

  constructor(url: string) {
    this.settings = poolSettings(url);
    const s = this.settings;
    this.pool = new pg.Pool({
      connectionString: s.connectionString,
      max: s.max,
      connectionTimeoutMillis: s.connectionTimeoutMillis,
      idleTimeoutMillis: s.idleTimeoutMillis,
      statement_timeout: s.statementTimeoutMillis,
      idle_in_transaction_session_timeout: Math.max(s.statementTimeoutMillis, 60_000),
      application_name: 'agw',
      types,
    });
    // An idle pooled connection that the server drops must not crash the daemon.
    this.pool.on('error', () => {});
    this.outer = this.queryable(this.pool);
  }

  private text(sql: string): string {
    let t = this.texts.get(sql);
    if (t === undefined) {
      t = toPgPlaceholders(sql);
      if (this.texts.size >= SQL_CACHE_MAX) this.texts.clear();
      this.texts.set(sql, t);
    }
    return t;
  }

  private async query<T>(c: Client, sql: string, params?: Param[]): Promise<pg.QueryResult<T & Row>> {
    return c.query<T & Row>(this.text(sql), bind(params));
  }

  private queryable(c: Client): Queryable {
    const dialect: Dialect = 'postgres';
    return {
      dialect,
      get: async <T>(sql: string, params?: Param[]) => (await this.query<T>(c, sql, params)).rows[0] as T | undefined,
      all: async <T>(sql: string, params?: Param[]) => (await this.query<T>(c, sql, params)).rows as T[],
      run: async (sql: string, params?: Param[]): Promise<RunResult> => ({
        changes: (await this.query(c, sql, params)).rowCount ?? 0,
      }),
    };
  }

  get<T = Row>(sql: string, params?: Param[]): Promise<T | undefined> {
    return this.outer.get<T>(sql, params);
  }

  all<T = Row>(sql: string, params?: Param[]): Promise<T[]> {
    return this.outer.all<T>(sql, params);
  }

  run(sql: string, params?: Param[]): Promise<RunResult> {
    this.changes++;
    return this.outer.run(sql, params);
  }

  async tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await fn(this.queryable(client));
        await client.query('COMMIT');
        this.changes++; // this daemon's own writes count at once (others' arrive as agw_changed)
        return result;
      } catch (e) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true; // the connection is gone: do not hand it back to the pool
        }
        const code = (e as { code?: string }).code;
        if (!code || !RETRYABLE.has(code) || attempt >= TX_ATTEMPTS) throw e;
      } finally {
        client.release(broken);
      }
      // Back off a little, randomised, so the transactions that collided do not collide again.
      await new Promise((r) => setTimeout(r, Math.random() * 5 * 2 ** attempt));
    }
  }

  async exec(sql: string): Promise<void> {
    await this.pool.query(sql);
  }

  /**
   * A statement prepared once per pooled connection (node-postgres names it), outside a
   * transaction: the lease engine's function calls, one round trip each.
   */
  async call<T = Row>(name: string, sql: string, params: unknown[]): Promise<T[]> {
    return (await this.pool.query<T & Row>({ name, text: sql, values: params })).rows as T[];
  }

  // -- notifications: what other daemons and `agw admin` changed (migration 7's triggers) --

  private listener: pg.Client | null = null;
  private listening = false;
  private readonly channels = new Map<string, Set<(payload: string) => void>>();
  private readonly resets = new Set<() => void>();
  private changes = 0;
  private reconnect: NodeJS.Timeout | null = null;
  private closed = false;

  /**
   * Runs `fn` for every NOTIFY on `channel` (one connection per daemon listens for all
   * channels, reconnecting by itself). Also counts agw_changed for `version`.
   */
  async listen(channel: string, fn: (payload: string) => void): Promise<void> {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(fn);
    if (this.listener) await this.listener.query(`LISTEN ${channel}`);
    else await this.connectListener();
  }

  /** Runs `fn` whenever notifications may have been missed (the listening connection was lost). */
  onReset(fn: () => void): void {
    this.resets.add(fn);
  }

  private async connectListener(): Promise<void> {
    if (this.closed || this.listener) return;
    const c = new pg.Client({ connectionString: this.settings.connectionString, connectionTimeoutMillis: this.settings.connectionTimeoutMillis, application_name: 'agw-listen' });
    const lost = () => {
      if (this.listener !== c) return;
      this.listener = null;
      this.listening = false;
      this.changes++;
      for (const fn of this.resets) fn();
      c.end().catch(() => undefined);
      if (!this.closed && !this.reconnect) {
        this.reconnect = setTimeout(() => {
          this.reconnect = null;
          this.connectListener().catch(() => undefined);
        }, 1000);
        this.reconnect.unref();
      }
    };
    c.on('error', lost);
    c.on('end', lost);
    c.on('notification', (n) => {
      if (n.channel === 'agw_changed') this.changes++;
      for (const fn of this.channels.get(n.channel) ?? []) fn(n.payload ?? '');
    });
    this.listener = c;
    try {
      await c.connect();
      for (const ch of new Set(['agw_changed', ...this.channels.keys()])) await c.query(`LISTEN ${ch}`);
      this.listening = true;
      this.changes++;
      for (const fn of this.resets) fn();
    } catch (e) {
      lost();
      throw e;
    }
  }

  /**
   * A number that changes whenever a key, tier, organization, quota override or a
   * wallet's unlimited flag may have changed (agw_changed, from any daemon or `agw
   * admin`), for in-memory copies (auth/key-cache.ts). While no connection listens it
   * changes on every call: nothing is believed that a missed notification could stale.
   */
  version(): number {
    return this.listening ? this.changes : ++this.changes;
  }

  /** Resolves once a connection works; rejects after the connect timeout otherwise. */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.reconnect) clearTimeout(this.reconnect);
    const l = this.listener;
    this.listener = null;
    this.listening = false;
    await l?.end().catch(() => undefined);
    if (!this.pool.ended) await this.pool.end();
  }
}
