import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { Queryable } from './db.js';

/**
 * The config is the source of truth for tiers; the `tiers` table mirrors their ids and
 * display names so that reports and operators' SQL can join on them. Synced at start.
 */
export async function syncTiers(q: Queryable, config: ResolvedConfig, now = Date.now()): Promise<void> {
  for (const t of config.tiers.values()) {
    await q.run(
      `INSERT INTO tiers (id, display_name, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET display_name = excluded.display_name, updated_at = excluded.updated_at`,
      [t.id, t.displayName, now],
    );
  }
}
