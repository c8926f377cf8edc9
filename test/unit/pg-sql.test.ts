import { describe, expect, test } from 'vitest';
import { poolSettings, toPgPlaceholders } from '../../src/daemon/store/pg-sql.js';

describe('toPgPlaceholders', () => {
  test('numbers ? placeholders in order', () => {
    expect(toPgPlaceholders('SELECT * FROM t WHERE a = ? AND b IN (?, ?) LIMIT ?')).toBe(
      'SELECT * FROM t WHERE a = $1 AND b IN ($2, $3) LIMIT $4',
    );
  });

  test('leaves ? inside string literals, quoted identifiers and comments alone', () => {
    const sql = `SELECT '?', 'it''s ?', "odd?col", E'\\'?' FROM t -- why?\nWHERE a = ? /* and ? */ AND b = ?`;
    expect(toPgPlaceholders(sql)).toBe(
      `SELECT '?', 'it''s ?', "odd?col", E'\\'?' FROM t -- why?\nWHERE a = $1 /* and ? */ AND b = $2`,
    );
  });

  test("keeps LIKE ... ESCAPE '\\' (standard strings) and dollar quotes", () => {
    expect(toPgPlaceholders("a LIKE ? ESCAPE '\\' OR b LIKE ? ESCAPE '\\'")).toBe("a LIKE $1 ESCAPE '\\' OR b LIKE $2 ESCAPE '\\'");
    expect(toPgPlaceholders('SELECT $q$ ? $q$, ?')).toBe('SELECT $q$ ? $q$, $1');
  });
});

describe('poolSettings', () => {
  test('defaults, and agw parameters are read off the URL without the password showing', () => {
    const d = poolSettings('postgres://agw:s3cret@db.internal:6432/agw');
    expect(d).toMatchObject({ max: 10, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000, statementTimeoutMillis: 30_000 });
    expect(d.display).toBe('db.internal:6432/agw');
    const s = poolSettings('postgres://agw:s3cret@db/agw?pool_max=25&connect_timeout=2&idle_timeout=60&statement_timeout=5000&sslmode=disable');
    expect(s).toMatchObject({ max: 25, connectionTimeoutMillis: 2000, idleTimeoutMillis: 60_000, statementTimeoutMillis: 5000 });
    expect(s.connectionString).toBe('postgres://agw:s3cret@db/agw?sslmode=disable');
  });

  test('a bad pool parameter is named', () => {
    expect(() => poolSettings('postgres://db/agw?pool_max=0')).toThrow(/pool_max must be an integer from 1/);
    expect(() => poolSettings('postgres://db/agw?connect_timeout=soon')).toThrow(/connect_timeout/);
  });
});
