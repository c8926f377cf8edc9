import type { AppContext } from '../context/index.js';
import type { Db } from '../store/db.js';

/**
 * Keys' `lastUsedAt` without a store write on the gateway's path: a use is noted in memory
 * (one Map write: key id -> the minute of the use), and the noted minutes are written in
 * one transaction every `gateway.keyLastUsedFlushMs` (default 60 s) and when the daemon
 * stops. Minute resolution: `lastUsedAt` says when a key was last used to the minute, and
 * is at most one flush interval behind. Each row only ever moves forward (`last_used_at <
 * ?`), so several daemons on one PostgreSQL store keep the latest use of any of them.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

const pending = new WeakMap<Db, Map<string, number>>();

/**
 * Uses noted on this daemon and not yet written (key id -> minute), until their flush has
 * committed: what a key's `lastUsedAt` shows on this daemon at once. Key ids are unique, so
 * one map serves every store of the process; it holds only keys used since the last flush.
 */
const unwritten = new Map<string, number>();

/** A use of key `keyId` now (rounded down to the minute). */
export function noteKeyUse(db: Db, keyId: string, now = Date.now()): void {
  let uses = pending.get(db);
  if (!uses) pending.set(db, (uses = new Map()));
  const minute = now - (now % LAST_USED_RESOLUTION_MS);
  uses.set(keyId, minute);
  unwritten.set(keyId, minute);
}

/**
 * A key's `lastUsedAt` (epoch ms) as this daemon knows it: the stored one, or a use noted
 * here that the next flush will write, whichever is later.
 */
export function lastUsedOf(keyId: string, stored: number | null): number | null {
  const noted = unwritten.get(keyId);
  if (noted === undefined) return stored === null ? null : Number(stored);
  return stored === null ? noted : Math.max(Number(stored), noted);
}

/** Writes the uses noted so far (one transaction); how many keys it updated. */
export async function flushKeyUses(db: Db): Promise<number> {
  const uses = pending.get(db);
  if (!uses?.size) return 0;
  pending.set(db, new Map());
  const rows = [...uses];
  try {
    await db.tx(async (q) => {
      for (const [id, at] of rows) {
        await q.run('UPDATE api_keys SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)', [at, id, at]);
      }
    });
    // written: the store shows them now (a later use noted meanwhile stays)
    for (const [id, at] of rows) if (unwritten.get(id) === at && !pending.get(db)!.has(id)) unwritten.delete(id);
  } catch (err) {
    // kept for the next flush (a later use of the same key wins)
    const now = pending.get(db)!;
    for (const [id, at] of rows) now.set(id, Math.max(at, now.get(id) ?? 0));
    throw err;
  }
  return rows.length;
}

/** Flushes every `gateway.keyLastUsedFlushMs` and once more at shutdown (after the server stopped accepting). */
export function startKeyUsageFlush(ctx: AppContext): void {
  const every = ctx.config.gateway.keyLastUsedFlushMs;
  const flush = () => flushKeyUses(ctx.db).catch((err: unknown) => ctx.log.warn({ err }, 'writing keys’ lastUsedAt failed; retried at the next flush'));
  const timer = setInterval(() => void flush(), every);
  timer.unref();
  ctx.onClose.push(async () => {
    clearInterval(timer);
    await flush();
  });
}
