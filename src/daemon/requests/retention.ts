import type { AppContext } from '../context/index.js';
import { DAY_MS } from '../store/spend-rollup.js';

/**
 * Request log retention (logs.retentionDays, logs.bodiesRetentionDays): a background
 * pruner deletes records, and bodies, created before the start of the UTC day that many
 * days back (whole days: a record is kept at least retentionDays days). It deletes in
 * batches of PRUNE_BATCH rows in index order, one short transaction each, with a pause
 * between batches, so no lock is held long and gateway bookings go on meanwhile.
 *
 * Before deleting it records the boundary (request_log_pruned.before_ms, only ever
 * raised). The spend reports read the partial first day of a range from the records, and
 * the whole days from the rollup; for a range starting before that boundary they read
 * the first day from the rollup too (store/spend.ts), so they stay exact whatever was
 * pruned. The rollups themselves are never pruned.
 *
 * Several daemons on one PostgreSQL each run a pruner: their batches delete disjoint or
 * already-deleted rows, which is harmless.
 */
export const PRUNE_BATCH = 1000;
const FIRST_RUN_MS = 60_000;
const EVERY_MS = 60 * 60_000;
const PAUSE_MS = 20;

export interface PruneReport {
  /** records created before this were deleted (a UTC midnight) */
  beforeMs: number;
  records: number;
  bodies: number;
}

/** Where the log is cut for a retention of `days` at `now`: the UTC midnight `days` days back. */
export function retentionBoundary(days: number, now: number): number {
  return (Math.floor(now / DAY_MS) - days) * DAY_MS;
}

/** One pass: the boundary recorded, then everything older deleted batch by batch. */
export async function pruneOnce(ctx: AppContext, now = Date.now(), stopped: () => boolean = () => false): Promise<PruneReport> {
  const logs = ctx.config.logs;
  const beforeMs = retentionBoundary(logs.retentionDays, now);
  const bodiesBefore = retentionBoundary(logs.bodiesRetentionDays, now);
  await ctx.db.tx((q) =>
    q.run(
      `INSERT INTO request_log_pruned (id, before_ms) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET
         before_ms = CASE WHEN excluded.before_ms > request_log_pruned.before_ms THEN excluded.before_ms ELSE request_log_pruned.before_ms END`,
      [beforeMs],
    ),
  );
  const records = await deleteBatches(ctx, 'usage_records', 'id', beforeMs, stopped);
  const bodies = bodiesBefore > beforeMs ? await deleteBatches(ctx, 'request_bodies', 'usage_id', bodiesBefore, stopped) : 0;
  if (records || bodies) ctx.log.info({ records, bodies, before: new Date(beforeMs).toISOString() }, 'request log pruned');
  return { beforeMs, records, bodies };
}

async function deleteBatches(ctx: AppContext, table: 'usage_records' | 'request_bodies', key: string, before: number, stopped: () => boolean): Promise<number> {
  let total = 0;
  while (!stopped()) {
    const { changes } = await ctx.db.tx((q) =>
      q.run(`DELETE FROM ${table} WHERE ${key} IN (SELECT ${key} FROM ${table} WHERE created_at < ? ORDER BY created_at LIMIT ${PRUNE_BATCH})`, [before]),
    );
    total += changes;
    if (changes < PRUNE_BATCH) break;
    await new Promise((r) => setTimeout(r, PAUSE_MS));
  }
  return total;
}

/** Runs the pruner a minute after start, then hourly; returns its stop (waits for a pass under way). */
export function startPruner(ctx: AppContext): () => Promise<void> {
  let stopped = false;
  let running: Promise<unknown> | null = null;
  const run = () => {
    running = pruneOnce(ctx, Date.now(), () => stopped)
      .catch((err) => ctx.log.error({ err }, 'pruning the request log failed; retried at the next pass'))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(run, EVERY_MS).unref();
      });
  };
  let timer = setTimeout(run, FIRST_RUN_MS).unref();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
