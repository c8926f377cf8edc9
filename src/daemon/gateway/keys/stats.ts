import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../shared/config/resolve.js';
import type { AppContext } from '../../context/index.js';
import { labelValue } from '../../context/metrics.js';
import { writeKeyStats, type KeyStatRow } from '../../store/provider-key-stats.js';

/**
 * Provider keys' figures (CONTRACT "Several keys per provider": calls, failures, cooldown)
 * for the operator: on GET /api/metrics as agw_upstream_key_* (this daemon's counts), and
 * in the store for `agw admin providers` (which runs in another process): each daemon
 * writes its rows every `gateway.keyStatsFlushMs` and when it stops. Names only, never a
 * secret.
 */
export function keyStatRows(config: ResolvedConfig): KeyStatRow[] {
  const rows: KeyStatRow[] = [];
  for (const p of config.providers.values()) {
    for (const k of p.keys) rows.push({ provider: p.def.id, key: k.name, calls: k.health.calls, failures: k.health.failures, coolingUntil: k.health.coolingUntil });
  }
  return rows;
}

/** The agw_upstream_key_* lines of /api/metrics. */
export function keyMetricLines(config: ResolvedConfig, now: number): string[] {
  const rows = keyStatRows(config);
  if (!rows.length) return [];
  const lbl = (r: KeyStatRow) => `provider="${labelValue(r.provider)}",key="${labelValue(r.key)}"`;
  const cooling = (r: KeyStatRow) => Math.max(0, (r.coolingUntil - now) / 1000);
  return [
    '# HELP agw_upstream_key_calls_total Upstream tries by provider key.',
    '# TYPE agw_upstream_key_calls_total counter',
    ...rows.map((r) => `agw_upstream_key_calls_total{${lbl(r)}} ${r.calls}`),
    '# HELP agw_upstream_key_failures_total Upstream tries by provider key answered 429, 5xx or not at all.',
    '# TYPE agw_upstream_key_failures_total counter',
    ...rows.map((r) => `agw_upstream_key_failures_total{${lbl(r)}} ${r.failures}`),
    '# HELP agw_upstream_key_healthy 1 when the provider key takes calls, 0 while it cools down.',
    '# TYPE agw_upstream_key_healthy gauge',
    ...rows.map((r) => `agw_upstream_key_healthy{${lbl(r)}} ${cooling(r) > 0 ? 0 : 1}`),
    '# HELP agw_upstream_key_cooling_seconds Seconds until the provider key takes calls again (0: healthy).',
    '# TYPE agw_upstream_key_cooling_seconds gauge',
    ...rows.map((r) => `agw_upstream_key_cooling_seconds{${lbl(r)}} ${cooling(r).toFixed(3)}`),
  ];
}

/** This daemon's id in provider_key_stats. */
export const DAEMON_ID = `dmn_${randomBytes(8).toString('hex')}`;

const written = new WeakMap<AppContext, string>();

/** Writes this daemon's key figures now (nothing when no provider has a key, or nothing changed since the last write). */
export async function flushKeyStats(ctx: AppContext): Promise<void> {
  const rows = keyStatRows(ctx.config);
  const figures = JSON.stringify(rows);
  if (!rows.length || written.get(ctx) === figures) return;
  await writeKeyStats(ctx.db, DAEMON_ID, rows, Date.now());
  written.set(ctx, figures);
}

/** Every `gateway.keyStatsFlushMs`; the last flush is the caller's (at shutdown, after the calls in flight). */
export function startKeyStatsFlush(ctx: AppContext): () => Promise<void> {
  const flush = () => flushKeyStats(ctx).catch((err: unknown) => ctx.log.warn({ err }, 'writing provider keys’ figures failed; retried at the next flush'));
  const timer = setInterval(() => void flush(), ctx.config.gateway.keyStatsFlushMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await flush();
  };
}
