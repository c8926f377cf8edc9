/**
 * Per-provider circuit breaker for smart routing: after `threshold` consecutive failures
 * (5xx, timeout, connection error) a provider is kept out for `cooldownMs`; after that one
 * trial call is let through (half-open): a success closes the breaker, one more failure
 * opens it again at once. The policy is data: threshold and cooldown come from config.
 */
export interface BreakerPolicy {
  failureThreshold: number;
  cooldownMs: number;
}

interface State {
  failures: number;
  openUntil: number;
}

export class Breaker {
  private readonly states = new Map<string, State>();

  constructor(
    private readonly policy: BreakerPolicy,
    private readonly now: () => number = Date.now,
  ) {}

  isOpen(provider: string): boolean {
    const s = this.states.get(provider);
    return s !== undefined && s.openUntil > this.now();
  }

  failure(provider: string): void {
    const s = this.states.get(provider) ?? { failures: 0, openUntil: 0 };
    s.failures++;
    if (s.failures >= this.policy.failureThreshold) {
      s.openUntil = this.now() + this.policy.cooldownMs;
      s.failures = this.policy.failureThreshold - 1; // half-open after the cooldown
    }
    this.states.set(provider, s);
  }

  success(provider: string): void {
    this.states.delete(provider);
  }
}

/** Exponentially weighted time-to-first-byte per `provider/model`, for best-fast-llm. */
export class LatencyTracker {
  private readonly ewma = new Map<string, number>();

  constructor(private readonly alpha = 0.3) {}

  record(key: string, ms: number): void {
    const prev = this.ewma.get(key);
    this.ewma.set(key, prev === undefined ? ms : prev + this.alpha * (ms - prev));
  }

  /** undefined until the first successful call */
  get(key: string): number | undefined {
    return this.ewma.get(key);
  }
}
