import type { AppContext } from '../context.js';
import { staleReservations } from '../store/usage.js';
import { releaseById } from '../money/calls.js';

/**
 * Releases reservations orphaned by a crash (or a call stuck past the TTL): records still
 * 'reserved' after `gateway.reservationTtlMs` become 'failed' and their quota unit is
 * refunded. Runs at start and every `intervalMs`. A call that finishes after being swept
 * is still booked (finalize takes the unit again), so nothing is lost either way.
 */
export async function sweepOrphans(ctx: AppContext, now = Date.now()): Promise<number> {
  let released = 0;
  for (;;) {
    const rows = await staleReservations(ctx.db, now - ctx.config.gateway.reservationTtlMs);
    for (const r of rows) {
      if (await releaseById(ctx, r.id, r.user_id, r.usage_type, r.period_start, null)) released++;
    }
    if (rows.length < 500) return released;
  }
}

export function startSweeper(ctx: AppContext, intervalMs = 60_000): () => void {
  let running = false;
  const run = () => {
    if (running) return;
    running = true;
    sweepOrphans(ctx)
      .then((n) => {
        if (n > 0) ctx.log.warn({ released: n }, 'released orphaned quota reservations');
      })
      .catch((err) => ctx.log.error({ err }, 'reservation sweep failed'))
      .finally(() => (running = false));
  };
  const first = setTimeout(run, 0);
  const timer = setInterval(run, intervalMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
