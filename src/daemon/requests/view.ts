import { AgwError } from '../../shared/errors.js';
import { nanoToUsd } from '../../shared/money.js';
import type { RequestDetailT, RequestFiltersT, RequestRecordT, RequestsDailyT } from '../../shared/schemas/requests.js';
import { isLimitedKey, type Principal } from '../auth/principal.js';
import type { Queryable } from '../store/db.js';
import { descendantIds } from '../store/keys.js';
import type { BodiesRow, DailyRow, RequestFilter, RequestRow } from '../store/requests.js';
import { DAY_MS } from '../store/spend-rollup.js';
import { BODY_CAP } from './bodies.js';

/** The contract's Request from a usage record. `withUser`: the master token's answers name the account. */
export function requestView(r: RequestRow, withUser = false): RequestRecordT {
  const v: RequestRecordT = {
    id: r.id,
    createdAt: new Date(r.created_at).toISOString(),
    endpoint: endpointOf(r.endpoint),
    keyId: r.key_id,
    projectId: r.project_id,
    provider: r.provider_id,
    model: r.model,
    alias: r.alias,
    stream: r.stream === 1,
    status: r.answer,
    code: r.error_code,
    promptTokens: r.prompt_tokens,
    completionTokens: r.completion_tokens,
    cachedTokens: r.cached_tokens,
    cacheWriteTokens: r.cache_write_tokens,
    reasoningTokens: r.reasoning_tokens,
    cost: nanoToUsd(r.customer_cost_nusd),
    latencyMs: r.latency_ms,
    ttfbMs: r.ttfb_ms,
    attempts: r.attempts,
    droppedParams: droppedOf(r.dropped_params),
  };
  if (withUser) v.userId = r.user_id;
  return v;
}

/** The stored JSON array of dropped parameters (null: none); anything else reads as none. */
function droppedOf(text: string | null): string[] {
  if (!text) return [];
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function detailView(r: RequestRow, bodies: BodiesRow | undefined, withUser = false): RequestDetailT {
  const v: RequestDetailT = requestView(r, withUser);
  if (bodies) {
    const body = (text: string | null, bytes: number) => ({ text, bytes, truncated: bytes > BODY_CAP });
    v.bodies = { request: body(bodies.request, bodies.request_bytes), response: body(bodies.response, bodies.response_bytes) };
  }
  return v;
}

/** Records written before version 7 name the route ('/gateway/chat', '/external/...'). */
function endpointOf(e: string): RequestRecordT['endpoint'] {
  if (e === 'proxy' || e === 'smart' || e === 'chat') return e;
  if (e.includes('smart')) return 'smart';
  return e.includes('gateway/chat') ? 'chat' : 'proxy';
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `since`: an ISO date-time, or 30m / 24h / 7d back from now. */
export function parseSince(s: string | undefined, now = Date.now()): number | undefined {
  if (s === undefined) return undefined;
  const rel = /^([0-9]{1,6})([mhd])$/.exec(s);
  if (rel) return now - Number(rel[1]) * UNIT_MS[rel[2] as keyof typeof UNIT_MS];
  const t = Date.parse(s);
  if (!Number.isFinite(t)) throw new AgwError('INVALID_REQUEST', `since must be an ISO date-time or a duration like 24h or 7d, got ${s}`, { field: 'since' });
  return t;
}

/**
 * Whose calls a caller may read: an account its own; the master token every account's,
 * or one account's with `userId`. `userId` from anyone else is a 403, not ignored.
 */
export function filterFor(p: Principal, q: RequestFiltersT, now = Date.now(), keyIds?: readonly string[]): RequestFilter {
  if (q.userId !== undefined && p.kind !== 'master') {
    throw new AgwError('FORBIDDEN', 'userId is for the master token: your credentials show your own calls only', { field: 'userId' });
  }
  return {
    userId: p.kind === 'master' ? (q.userId ?? null) : p.userId,
    since: parseSince(q.since, now),
    provider: q.provider,
    model: q.model,
    status: q.status,
    keyId: q.keyId,
    keyIds,
    projectId: q.project,
    endpoint: q.endpoint,
  };
}

/**
 * Whose calls a limited key reads (a key with limits, an expiry, or made with a limited key:
 * not the account, auth/principal.ts isLimitedKey): its own and those of the keys made with
 * it, as it manages only those keys. Undefined: the whole account (or every account).
 */
export async function keyScope(q: Queryable, p: Principal): Promise<string[] | undefined> {
  if (!isLimitedKey(p) || p.kind !== 'key') return undefined;
  return [p.keyId, ...(await descendantIds(q, p.keyId))];
}

/** Does a record pass a filter (the live stream matches in memory)? */
export function matches(f: RequestFilter, r: RequestRow): boolean {
  return (
    (f.userId === null || r.user_id === f.userId) &&
    (f.since === undefined || r.created_at >= f.since) &&
    (f.provider === undefined || r.provider_id === f.provider) &&
    (f.model === undefined || r.model === f.model) &&
    (f.keyId === undefined || r.key_id === f.keyId) &&
    (f.keyIds === undefined || (r.key_id !== null && f.keyIds.includes(r.key_id))) &&
    (f.projectId === undefined || r.project_id === f.projectId) &&
    (f.endpoint === undefined || endpointOf(r.endpoint) === f.endpoint) &&
    (f.status === undefined || (f.status === 'ok') === r.answer < 400)
  );
}

/** One entry per UTC day from `firstDay` to today, days without calls included (GET /api/requests/daily, /activity's charts). */
export function dailySeries(rows: readonly DailyRow[], firstDay: number, now = Date.now()): RequestsDailyT['days'] {
  const byDay = new Map(rows.map((r) => [r.day, r]));
  const out: RequestsDailyT['days'] = [];
  for (let d = firstDay; d <= Math.floor(now / DAY_MS); d++) {
    const r = byDay.get(d);
    out.push({
      date: new Date(d * DAY_MS).toISOString().slice(0, 10),
      requests: r?.requests ?? 0,
      errors: r?.errors ?? 0,
      calls: r?.calls ?? 0,
      failed: r?.failed ?? 0,
      refused: r?.refused ?? 0,
      cost: nanoToUsd(r?.costNano ?? 0),
      latencyP50Ms: r?.p50 ?? null,
      latencyP95Ms: r?.p95 ?? null,
    });
  }
  return out;
}
