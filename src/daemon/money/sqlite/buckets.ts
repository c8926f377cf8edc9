import type { RateState } from '../rates.js';

/**
 * Token buckets for a key's rate limits (rpm, tpm) on the SQLite daemon, which is the
 * only one admitting against its store, so memory is exact. A bucket holds up to
 * `limit` tokens and refills at `limit` per minute; a call takes 1 request token, and
 * the tokens its hold covers (prompt bound + output cap), given back at settlement
 * beyond what it used. A restarted daemon starts with full buckets (a minute's worth at
 * most). Several daemons on PostgreSQL share the bucket rows instead (postgres/engine.ts).
 */

interface Bucket {
  level: number;
  at: number;
  limit: number;
}

const MAX_BUCKETS = 100_000;

export class Buckets {
  private readonly map = new Map<string, Bucket>();

  private bucket(key: string, limit: number, now: number): Bucket {
    let b = this.map.get(key);
    if (!b) {
      if (this.map.size >= MAX_BUCKETS) this.map.clear(); // forgetting a bucket only fills it
      this.map.set(key, (b = { level: limit, at: now, limit }));
    }
    b.level = Math.min(limit, b.level + (Math.max(0, now - b.at) * limit) / 60_000);
    b.at = now;
    b.limit = limit;
    return b;
  }

  /** Whether `n` tokens are there now (nothing taken). */
  has(key: string, limit: number, n: number, now: number): boolean {
    return this.bucket(key, limit, now).level >= n;
  }

  take(key: string, limit: number, n: number, now: number): void {
    this.bucket(key, limit, now).level -= n;
  }

  give(key: string, limit: number, n: number, now: number): void {
    const b = this.bucket(key, limit, now);
    b.level = Math.min(limit, b.level + n);
  }

  /** ms until `n` tokens are there. */
  waitMs(key: string, limit: number, n: number, now: number): number {
    const b = this.bucket(key, limit, now);
    return b.level >= n ? 0 : Math.ceil(((Math.min(n, limit) - b.level) * 60_000) / limit);
  }

  state(key: string, limit: number, now: number): RateState {
    const b = this.bucket(key, limit, now);
    return { limit, remaining: Math.max(0, Math.floor(b.level)), resetMs: Math.ceil(((limit - b.level) * 60_000) / limit) };
  }
}
