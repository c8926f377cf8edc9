import type { Db, Param } from '../../src/daemon/store/db.js';
import { DAY_MS, rebuildSpendDaily } from '../../src/daemon/store/spend-rollup.js';

/**
 * Seeds usage_records straight through the store (no gateway calls), for spend tests
 * and benchmarks, and rebuilds the daily spend rollup over the days they touch (what
 * the gateway's settlement would have added). Rows are deterministic for a given seed.
 */
export interface UsageSeed {
  userId: string;
  providerId: string;
  status: 'finalized' | 'failed' | 'reserved';
  createdAt: number;
  rawNano: number;
  customerNano: number;
  projectId?: string | null;
  model?: string;
}

const COLS = [
  'id',
  'user_id',
  'usage_type',
  'status',
  'endpoint',
  'provider_id',
  'model',
  'project_id',
  'raw_cost_nusd',
  'customer_cost_nusd',
  'period_start',
  'created_at',
  'finalized_at',
];
const BATCH = 200;
const monthStartIso = (t: number) => {
  const d = new Date(t);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)).toISOString();
};
let seq = 0;

/**
 * Inserts rows in batched multi-row INSERTs inside transactions, then rebuilds the rollup
 * of the days they touch (`rollup: false`: not, for a store that has no rollup yet).
 */
export async function insertUsage(db: Db, rows: UsageSeed[], opts: { rollup?: boolean } = {}): Promise<void> {
  const prefix = `use_seed_${process.pid}_${Date.now().toString(36)}_`;
  for (let i = 0; i < rows.length; i += 20 * BATCH) {
    const chunk = rows.slice(i, i + 20 * BATCH);
    await db.tx(async (q) => {
      for (let j = 0; j < chunk.length; j += BATCH) {
        const part = chunk.slice(j, j + BATCH);
        const params: Param[] = [];
        for (const r of part) {
          params.push(
            `${prefix}${seq++}`,
            r.userId,
            'ai_chat',
            r.status,
            '/gateway/chat',
            r.providerId,
            r.model ?? 'gpt-4o-mini',
            r.projectId ?? null,
            r.rawNano,
            r.customerNano,
            monthStartIso(r.createdAt),
            r.createdAt,
            r.status === 'reserved' ? null : r.createdAt + 500,
          );
        }
        const tuple = `(${COLS.map(() => '?').join(', ')})`;
        await q.run(`INSERT INTO usage_records (${COLS.join(', ')}) VALUES ${part.map(() => tuple).join(', ')}`, params);
      }
    });
  }
  if (opts.rollup === false) return;
  const days = new Map<string, { from: number; to: number }>();
  for (const r of rows) {
    const day = Math.floor(r.createdAt / DAY_MS);
    const d = days.get(r.userId) ?? { from: day, to: day };
    days.set(r.userId, { from: Math.min(d.from, day), to: Math.max(d.to, day) });
  }
  await db.tx(async (q) => {
    for (const [userId, d] of days) await rebuildSpendDaily(q, userId, d.from, d.to);
  });
}

/** A small deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const PROVIDERS = ['openai', 'anthropic', 'groq', 'mistral', 'deepseek'];

/**
 * `n` usage rows for one busy user spread evenly over the last 365 days: five
 * providers, the given projects plus untagged calls, ~95% finalized, ~5% failed, and
 * the 3 newest still reserved (in flight). Returns the expected totals over the year.
 */
export async function seedYearOfUsage(
  db: Db,
  userId: string,
  n: number,
  opts: { projects?: string[]; seed?: number; now?: number } = {},
): Promise<{ calls: number; failures: number; rawNano: number; customerNano: number }> {
  const rnd = prng(opts.seed ?? 42);
  const now = opts.now ?? Date.now();
  const span = 365 * 86_400_000 - 3_600_000; // an hour of slack: a slow seed must not age out
  const projects = [null, ...(opts.projects ?? [])];
  const totals = { calls: 0, failures: 0, rawNano: 0, customerNano: 0 };
  const CHUNK = 50_000;
  for (let done = 0; done < n; done += CHUNK) {
    const rows: UsageSeed[] = [];
    for (let i = done; i < Math.min(n, done + CHUNK); i++) {
      const x = rnd();
      // in-flight calls are the newest few only (the gateway sweeps older reservations)
      const status = i < 3 ? 'reserved' : x < 0.95 ? 'finalized' : 'failed';
      const rawNano = status === 'finalized' ? 1_000 + Math.floor(rnd() * 5_000_000) : 0;
      const customerNano = rawNano * 2;
      rows.push({
        userId,
        providerId: PROVIDERS[Math.floor(rnd() * PROVIDERS.length)],
        status,
        createdAt: now - Math.floor((i / n) * span),
        rawNano,
        customerNano,
        projectId: projects[Math.floor(rnd() * projects.length)],
      });
      if (status !== 'reserved') {
        totals.calls++;
        if (status === 'failed') totals.failures++;
        totals.rawNano += rawNano;
        totals.customerNano += customerNano;
      }
    }
    await insertUsage(db, rows);
  }
  return totals;
}
