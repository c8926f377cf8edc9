/**
 * The two small translations between the store's portable SQL and PostgreSQL: `?`
 * placeholders become `$1..$n`, and the pool settings an operator may put on the
 * store URL are read off it.
 */

/**
 * Rewrites `?` placeholders to `$1..$n`, leaving alone any `?` inside a string literal
 * ('…', E'…'), a quoted identifier ("…"), a dollar-quoted body ($tag$…$tag$) or a
 * comment (-- … and /* … *\/).
 */
export function toPgPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === '?') {
      out += `$${++n}`;
      i++;
      continue;
    }
    let end = i + 1;
    if (c === "'" || c === '"') end = closeQuote(sql, i, c);
    else if (c === '-' && sql[i + 1] === '-') end = lineEnd(sql, i);
    else if (c === '/' && sql[i + 1] === '*') end = blockEnd(sql, i);
    else if (c === '$') end = dollarEnd(sql, i);
    out += sql.slice(i, end);
    i = end;
  }
  return out;
}

/** Index just past the quote closing the one at `start` ('' and "" are escapes). */
function closeQuote(sql: string, start: number, q: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql[i] === q) {
      if (sql[i + 1] === q) i += 2;
      else return i + 1;
    } else if (q === "'" && sql[i] === '\\' && start > 0 && /[eE]/.test(sql[start - 1])) i += 2;
    else i++;
  }
  return sql.length;
}

function lineEnd(sql: string, start: number): number {
  const nl = sql.indexOf('\n', start);
  return nl < 0 ? sql.length : nl + 1;
}

function blockEnd(sql: string, start: number): number {
  const close = sql.indexOf('*/', start + 2);
  return close < 0 ? sql.length : close + 2;
}

/** `$tag$ … $tag$` (tag may be empty); a `$1` parameter reference is not a quote. */
function dollarEnd(sql: string, start: number): number {
  const m = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(start));
  if (!m || (start > 0 && /[A-Za-z0-9_]/.test(sql[start - 1]))) return start + 1;
  const close = sql.indexOf(m[0], start + m[0].length);
  return close < 0 ? sql.length : close + m[0].length;
}

export interface PgPoolSettings {
  /** The connection string with agw's own parameters removed. */
  connectionString: string;
  /** Most connections this daemon opens (`pool_max`, default 10). */
  max: number;
  /** Give up connecting, or waiting for a free pooled connection, after this (`connect_timeout` s, default 5). */
  connectionTimeoutMillis: number;
  /** Close a connection idle this long (`idle_timeout` s, default 30). */
  idleTimeoutMillis: number;
  /** Cancel any one statement running longer (`statement_timeout` ms, default 30000). */
  statementTimeoutMillis: number;
  /** Where error messages point: host:port/database, never the password. */
  display: string;
}

const PARAMS = {
  pool_max: { min: 1, max: 1000, def: 10, scale: 1 },
  connect_timeout: { min: 1, max: 600, def: 5, scale: 1000 },
  idle_timeout: { min: 1, max: 86_400, def: 30, scale: 1000 },
  statement_timeout: { min: 100, max: 3_600_000, def: 30_000, scale: 1 },
} as const;

/** Reads agw's pool parameters off a postgres:// URL. Throws with the parameter named on a bad value. */
export function poolSettings(url: string): PgPoolSettings {
  const u = new URL(url);
  const value = (name: keyof typeof PARAMS): number => {
    const p = PARAMS[name];
    const raw = u.searchParams.get(name);
    u.searchParams.delete(name);
    if (raw === null) return p.def * p.scale;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < p.min || n > p.max)
      throw new Error(`store URL parameter ${name} must be an integer from ${p.min} to ${p.max}, got ${raw}`);
    return n * p.scale;
  };
  const max = value('pool_max');
  const connectionTimeoutMillis = value('connect_timeout');
  const idleTimeoutMillis = value('idle_timeout');
  const statementTimeoutMillis = value('statement_timeout');
  const db = decodeURIComponent(u.pathname.replace(/^\//, '')) || '(default database)';
  return {
    connectionString: u.toString(),
    max,
    connectionTimeoutMillis,
    idleTimeoutMillis,
    statementTimeoutMillis,
    display: `${u.hostname || 'localhost'}:${u.port || '5432'}/${db}`,
  };
}
