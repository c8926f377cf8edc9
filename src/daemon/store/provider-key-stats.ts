import type { Db } from './db.js';

/**
 * Provider keys' figures as the daemons last wrote them (migration 20): `agw admin
 * providers` reads what every daemon of the store counted.
 */
export interface KeyStatRow {
  provider: string;
  key: string;
  calls: number;
  failures: number;
  coolingUntil: number;
}

/** Rows of daemons that wrote nothing for this long are deleted. */
export const KEY_STATS_KEEP_MS = 30 * 24 * 3_600_000;

/** One daemon's figures (absolute since it started: writing twice is harmless); rows of daemons silent for 30 days go. */
export async function writeKeyStats(db: Db, daemonId: string, rows: readonly KeyStatRow[], now: number): Promise<void> {
  await db.tx(async (q) => {
    for (const r of rows) {
      await q.run(
        `INSERT INTO provider_key_stats (daemon_id, provider_id, key_name, calls, failures, cooling_until, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (daemon_id, provider_id, key_name) DO UPDATE SET calls = excluded.calls, failures = excluded.failures,
           cooling_until = excluded.cooling_until, updated_at = excluded.updated_at`,
        [daemonId, r.provider, r.key, r.calls, r.failures, r.coolingUntil, now],
      );
    }
    await q.run('DELETE FROM provider_key_stats WHERE updated_at < ?', [now - KEY_STATS_KEEP_MS]);
  });
}

/**
 * Every key's figures summed over the daemons; its cooldown is the latest any daemon
 * noted (a cooldown is a moment, so one noted by a daemon gone since simply passes; a
 * daemon writes when its figures change, so a key that recovered early is written back to 0).
 */
export async function readKeyStats(db: Db): Promise<KeyStatRow[]> {
  const rows = await db.all<{ provider_id: string; key_name: string; calls: unknown; failures: unknown; cooling: unknown }>(
    `SELECT provider_id, key_name, SUM(calls) AS calls, SUM(failures) AS failures, MAX(cooling_until) AS cooling
       FROM provider_key_stats GROUP BY provider_id, key_name`,
  );
  return rows.map((r) => ({ provider: r.provider_id, key: r.key_name, calls: Number(r.calls), failures: Number(r.failures), coolingUntil: Number(r.cooling ?? 0) }));
}
