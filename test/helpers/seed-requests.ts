import type { Db, Param } from '../../src/daemon/store/db.js';
import { DAY_MS, rebuildSpendDaily } from '../../src/daemon/store/spend-rollup.js';

/**
 * Request-log records written straight into usage_records (as a booking writes them),
 * for tests of the listing, the filters and retention on both stores without gateway
 * calls; the spend rollup of the days they touch is rebuilt as the bookings would have
 * kept it.
 */
export interface SeedRequest {
  id?: string;
  userId: string;
  createdAt: number;
  keyId?: string | null;
  projectId?: string | null;
  provider?: string;
  model?: string | null;
  endpoint?: 'proxy' | 'smart' | 'chat';
  /** what agw answered (default 200) */
  status?: number;
  code?: string | null;
  prompt?: number;
  completion?: number;
  costNano?: number;
  latencyMs?: number | null;
  attempts?: number;
}

let seq = 0;
const COLS = [
  'id', 'user_id', 'key_id', 'usage_type', 'status', 'endpoint', 'provider_id', 'model', 'alias', 'project_id',
  'prompt_tokens', 'completion_tokens', 'cached_tokens', 'units', 'raw_cost_nusd', 'customer_cost_nusd', 'hold_nusd',
  'written_off_nusd', 'http_status', 'answer_status', 'error_code', 'stream', 'latency_ms', 'ttfb_ms', 'attempts',
  'period_start', 'created_at', 'finalized_at',
];

/** Inserts the records (ids made up when absent) and returns them with their ids. */
export async function seedRequests(db: Db, rows: SeedRequest[]): Promise<(SeedRequest & { id: string })[]> {
  const out = rows.map((r) => ({ ...r, id: r.id ?? `use_seed${process.pid}x${(seq++).toString(36).padStart(8, '0')}` }));
  for (let i = 0; i < out.length; i += 100) {
    const part = out.slice(i, i + 100);
    const params: Param[] = [];
    for (const r of part) {
      const status = r.status ?? 200;
      const outcome = status < 400 ? 'finalized' : status === 402 || status === 403 || status === 429 ? 'refused' : 'failed';
      const cost = outcome === 'finalized' ? (r.costNano ?? 1000) : 0;
      params.push(
        r.id, r.userId, r.keyId ?? null, 'ai_chat', outcome, r.endpoint ?? 'chat', r.provider ?? 'openai', r.model === undefined ? 'gpt-4o-mini' : r.model, null,
        r.projectId ?? null, r.prompt ?? 10, r.completion ?? 5, 0, 0, Math.floor(cost / 2), cost, cost, 0, outcome === 'refused' ? null : status,
        status, r.code ?? (status < 400 ? null : 'UPSTREAM_UNREACHABLE'), 0, r.latencyMs === undefined ? 100 : r.latencyMs, 50, r.attempts ?? (outcome === 'refused' ? 0 : 1),
        '2026-01', r.createdAt, r.createdAt + 100,
      );
    }
    const tuple = `(${COLS.map(() => '?').join(', ')})`;
    await db.run(`INSERT INTO usage_records (${COLS.join(', ')}) VALUES ${part.map(() => tuple).join(', ')}`, params);
  }
  const days = new Map<string, { from: number; to: number }>();
  for (const r of out) {
    const day = Math.floor(r.createdAt / DAY_MS);
    const d = days.get(r.userId) ?? { from: day, to: day };
    days.set(r.userId, { from: Math.min(d.from, day), to: Math.max(d.to, day) });
  }
  await db.tx(async (q) => {
    for (const [userId, d] of days) await rebuildSpendDaily(q, userId, d.from, d.to);
  });
  return out;
}
