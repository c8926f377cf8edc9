import type { AppContext } from '../context/index.js';

/**
 * Gateway calls between reserve and settle. On shutdown the daemon waits (bounded) for
 * them before it closes the store, so a call whose client already left still gets
 * finalized or released instead of waiting for the orphan sweeper.
 */
class InFlight {
  private count = 0;
  private waiters: (() => void)[] = [];

  begin(): void {
    this.count++;
  }

  end(): void {
    if (--this.count === 0) for (const w of this.waiters.splice(0)) w();
  }

  /** Resolves when no call is in flight, or after `timeoutMs`. */
  idle(timeoutMs: number): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}

const trackers = new WeakMap<AppContext, InFlight>();

export function inflightOf(ctx: AppContext): InFlight {
  let t = trackers.get(ctx);
  if (!t) trackers.set(ctx, (t = new InFlight()));
  return t;
}
