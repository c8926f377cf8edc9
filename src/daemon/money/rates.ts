/** A key's rate-limit bucket as one call leaves it: what the x-ratelimit-* headers tell (both engines fill it). */
export interface RateState {
  limit: number;
  /** whole tokens left after this call */
  remaining: number;
  /** ms until the bucket is full again */
  resetMs: number;
}

/** A duration as OpenAI writes its x-ratelimit-reset-* headers: 20ms, 1.5s, 6m0s. */
export function resetText(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number(s.toFixed(3))}s`;
  const m = Math.floor(s / 60);
  return `${m}m${Math.round(s - m * 60)}s`;
}
