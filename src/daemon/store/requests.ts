import type { Param, Queryable } from './db.js';
import { DAY_MS } from './spend-rollup.js';

/**
 * Reading the request log (usage_records, one row per gateway call since migration 7).
 * Pages go newest first by (created_at, id) with a keyset cursor, so a page never
 * repeats or skips a record however many calls are booked meanwhile (a call booked
 * after the first page was read, with an older created_at, appears in the next listing
 * from the top). Rows still 'reserved' (calls in flight under the pre-7 schema) are not
 * calls yet and are left out.
 */
export interface RequestRow {
  id: string;
  user_id: string;
  created_at: number;
  finalized_at: number | null;
  endpoint: string;
  key_id: string | null;
  project_id: string | null;
  provider_id: string;
  model: string | null;
  alias: string | null;
  stream: number;
  /** the HTTP status agw answered (derived for rows written before it was recorded) */
  answer: number;
  error_code: string | null;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  customer_cost_nusd: number;
  latency_ms: number | null;
  ttfb_ms: number | null;
  attempts: number;
  /** a JSON array of names, null: none */
  dropped_params: string | null;
}

/** What agw answered; derived from the outcome for records older than the column. */
export const ANSWER_SQL = `COALESCE(answer_status, CASE WHEN status = 'finalized' THEN 200 ELSE COALESCE(http_status, 503) END)`;

const COLUMNS = `id, user_id, created_at, finalized_at, endpoint, key_id, project_id, provider_id, model, alias, stream,
  ${ANSWER_SQL} AS answer, error_code, prompt_tokens, completion_tokens, cached_tokens, cache_write_tokens, reasoning_tokens,
  customer_cost_nusd, latency_ms, ttfb_ms, attempts, dropped_params`;

export interface RequestFilter {
  /** one account (null: every account; the master token only) */
  userId: string | null;
  since?: number;
  provider?: string;
  model?: string;
  status?: 'ok' | 'error';
  keyId?: string;
  /** a limited key's scope: only these keys' calls (itself and the keys made with it) */
  keyIds?: readonly string[];
  projectId?: string;
  endpoint?: 'proxy' | 'smart' | 'chat';
}

export interface Cursor {
  createdAt: number;
  id: string;
}

export const encodeCursor = (c: Cursor) => `${c.createdAt}.${c.id}`;
export function decodeCursor(s: string): Cursor {
  const dot = s.indexOf('.');
  return { createdAt: Number(s.slice(0, dot)), id: s.slice(dot + 1) };
}

/** The WHERE clause of a filter (calls in flight left out), for the request log's queries. */
export function where(f: RequestFilter, extra: string[] = [], params: Param[] = []): { sql: string; params: Param[] } {
  const terms: string[] = ["status <> 'reserved'"];
  const p: Param[] = [];
  const eq = (col: string, v: Param | undefined) => {
    if (v === undefined) return;
    terms.push(`${col} = ?`);
    p.push(v);
  };
  eq('user_id', f.userId ?? undefined);
  if (f.since !== undefined) {
    terms.push('created_at >= ?');
    p.push(f.since);
  }
  eq('provider_id', f.provider);
  eq('model', f.model);
  eq('key_id', f.keyId);
  if (f.keyIds) {
    terms.push(f.keyIds.length ? `key_id IN (${f.keyIds.map(() => '?').join(', ')})` : '1 = 0');
    p.push(...f.keyIds);
  }
  eq('project_id', f.projectId);
  eq('endpoint', f.endpoint);
  if (f.status) terms.push(`${ANSWER_SQL} ${f.status === 'ok' ? '<' : '>='} 400`);
  return { sql: [...terms, ...extra].join(' AND '), params: [...p, ...params] };
}

/** One page, newest first: `limit` rows after `cursor`, and whether more follow. */
export async function listRequests(q: Queryable, f: RequestFilter, limit: number, cursor?: Cursor): Promise<{ rows: RequestRow[]; more: boolean }> {
  // created_at <= c (a range the index seeks to) AND (created_at < c OR id < i): the keyset "(created_at, id) < (c, i)"
  const w = cursor ? where(f, ['created_at <= ?', '(created_at < ? OR id < ?)'], [cursor.createdAt, cursor.createdAt, cursor.id]) : where(f);
  const rows = await q.all<RequestRow>(
    `SELECT ${COLUMNS} FROM usage_records WHERE ${w.sql} ORDER BY created_at DESC, id DESC LIMIT ?`,
    [...w.params, limit + 1],
  );
  const more = rows.length > limit;
  return { rows: (more ? rows.slice(0, limit) : rows).map(numeric), more };
}

/** Every matching record, newest first, a page at a time (exports): constant memory. */
export async function* eachRequest(q: Queryable, f: RequestFilter, pageSize = 1000): AsyncGenerator<RequestRow> {
  let cursor: Cursor | undefined;
  for (;;) {
    const { rows, more } = await listRequests(q, f, pageSize, cursor);
    yield* rows;
    if (!more) return;
    const last = rows[rows.length - 1];
    cursor = { createdAt: last.created_at, id: last.id };
  }
}

/** One record (of `userId`'s, unless null; of one of `keyIds`, when given). */
export async function getRequest(q: Queryable, id: string, userId: string | null, keyIds?: readonly string[]): Promise<RequestRow | undefined> {
  const w = where({ userId, keyIds }, ['id = ?'], [id]);
  const row = await q.get<RequestRow>(`SELECT ${COLUMNS} FROM usage_records WHERE ${w.sql}`, w.params);
  return row && numeric(row);
}

export interface BodiesRow {
  request: string | null;
  response: string | null;
  request_bytes: number;
  response_bytes: number;
}

export async function getBodies(q: Queryable, usageId: string): Promise<BodiesRow | undefined> {
  const row = await q.get<BodiesRow>('SELECT request, response, request_bytes, response_bytes FROM request_bodies WHERE usage_id = ?', [usageId]);
  return row && { ...row, request_bytes: Number(row.request_bytes), response_bytes: Number(row.response_bytes) };
}

/** The records with these ids (the live stream's fresh ones), in no particular order. */
export async function requestsByIds(q: Queryable, ids: readonly string[]): Promise<RequestRow[]> {
  if (!ids.length) return [];
  const rows = await q.all<RequestRow>(`SELECT ${COLUMNS} FROM usage_records WHERE id IN (${ids.map(() => '?').join(', ')})`, [...ids]);
  return rows.map(numeric);
}

/** (finalized_at, id) of the records settled at or after `from`, in settle order, after `after` (index only). */
export async function settledKeys(q: Queryable, after: { at: number; id: string }, limit: number): Promise<{ at: number; id: string }[]> {
  const rows = await q.all<{ finalized_at: number; id: string }>(
    'SELECT finalized_at, id FROM usage_records WHERE finalized_at >= ? AND (finalized_at > ? OR id > ?) ORDER BY finalized_at, id LIMIT ?',
    [after.at, after.at, after.id, limit],
  );
  return rows.map((r) => ({ at: Number(r.finalized_at), id: r.id }));
}

export interface DailyRow {
  day: number;
  requests: number;
  errors: number;
  /** calls as the spend reports count them: completed at a provider ('finalized' or 'failed') */
  calls: number;
  /** calls a provider did not complete ('failed') */
  failed: number;
  /** requests agw answered itself, before any provider ('refused') */
  refused: number;
  costNano: number;
  p50: number | null;
  p95: number | null;
}

/**
 * Per UTC day since `since`: calls, errors (answered ≥ 400), cost, and the latency
 * percentiles (nearest rank) of the calls that reached an upstream (refusals take no
 * time worth charting). Two queries; the store sorts each day's latencies itself.
 */
export async function dailyRequests(q: Queryable, f: RequestFilter, since: number): Promise<DailyRow[]> {
  const w = where({ ...f, since });
  const day = `created_at / ${DAY_MS}`;
  const counts = await q.all<{ day: number; requests: number; errors: number; cost: number; calls: number; failed: number; refused: number }>(
    `SELECT ${day} AS day, COUNT(*) AS requests, SUM(CASE WHEN ${ANSWER_SQL} >= 400 THEN 1 ELSE 0 END) AS errors,
            SUM(customer_cost_nusd) AS cost,
            SUM(CASE WHEN status IN ('finalized', 'failed') THEN 1 ELSE 0 END) AS calls,
            SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END) AS failed,
            SUM(CASE WHEN status = 'refused' THEN 1 ELSE 0 END) AS refused
       FROM usage_records WHERE ${w.sql} GROUP BY ${day} ORDER BY day`,
    w.params,
  );
  const lw = where({ ...f, since }, ['attempts > 0', 'latency_ms IS NOT NULL']);
  const ranks = await q.all<{ day: number; latency_ms: number; rn: number; n: number }>(
    `SELECT day, latency_ms, rn, n FROM (
       SELECT ${day} AS day, latency_ms,
              ROW_NUMBER() OVER (PARTITION BY ${day} ORDER BY latency_ms) AS rn,
              COUNT(*) OVER (PARTITION BY ${day}) AS n
         FROM usage_records WHERE ${lw.sql}) t
      WHERE rn = (n * 50 + 99) / 100 OR rn = (n * 95 + 99) / 100`,
    lw.params,
  );
  const pct = new Map<number, { p50: number | null; p95: number | null }>();
  for (const r of ranks) {
    const d = Number(r.day);
    const n = Number(r.n);
    const rn = Number(r.rn);
    const e = pct.get(d) ?? { p50: null, p95: null };
    if (rn === Math.floor((n * 50 + 99) / 100)) e.p50 = Number(r.latency_ms);
    if (rn === Math.floor((n * 95 + 99) / 100)) e.p95 = Number(r.latency_ms);
    pct.set(d, e);
  }
  return counts.map((c) => {
    const d = Number(c.day);
    return {
      day: d,
      requests: Number(c.requests),
      errors: Number(c.errors ?? 0),
      calls: Number(c.calls ?? 0),
      failed: Number(c.failed ?? 0),
      refused: Number(c.refused ?? 0),
      costNano: Number(c.cost ?? 0),
      ...(pct.get(d) ?? { p50: null, p95: null }),
    };
  });
}

/** PostgreSQL hands BIGINT columns back as strings: numbers here, once. */
function numeric(r: RequestRow): RequestRow {
  return {
    ...r,
    created_at: Number(r.created_at),
    finalized_at: r.finalized_at === null ? null : Number(r.finalized_at),
    stream: Number(r.stream),
    answer: Number(r.answer),
    prompt_tokens: Number(r.prompt_tokens),
    completion_tokens: Number(r.completion_tokens),
    cached_tokens: Number(r.cached_tokens),
    cache_write_tokens: Number(r.cache_write_tokens),
    reasoning_tokens: Number(r.reasoning_tokens),
    customer_cost_nusd: Number(r.customer_cost_nusd),
    latency_ms: r.latency_ms === null ? null : Number(r.latency_ms),
    ttfb_ms: r.ttfb_ms === null ? null : Number(r.ttfb_ms),
    attempts: Number(r.attempts),
  };
}
