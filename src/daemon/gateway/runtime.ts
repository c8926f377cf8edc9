import type { AppContext } from '../context/index.js';
import { Breaker, LatencyTracker } from './breaker.js';
import { Upstreams } from './upstream.js';
import { SecretRedactor } from '../../shared/secret-redactor.js';
import { inflightOf } from './inflight.js';
import { keyPolicy, type KeyPolicy } from './keys/policy.js';
import { StickyRoutes } from './keys/sticky.js';
import { keyMetricLines, startKeyStatsFlush } from './keys/stats.js';

/**
 * The gateway's long-lived state, one per daemon: upstream pools, breaker, latencies, the
 * secret redactor, the provider keys' cooldown policy and the conversations' pins.
 */
export interface Gateway {
  upstreams: Upstreams;
  breaker: Breaker;
  latency: LatencyTracker;
  /** built once from the configured provider keys: applied to what goes back from an upstream */
  redact: SecretRedactor;
  keyPolicy: KeyPolicy;
  sticky: StickyRoutes;
}

const runtimes = new WeakMap<AppContext, Gateway>();

export function gatewayOf(ctx: AppContext): Gateway {
  let gw = runtimes.get(ctx);
  if (!gw) {
    const g = ctx.config.gateway;
    const created: Gateway = {
      upstreams: new Upstreams(g),
      breaker: new Breaker(g),
      latency: new LatencyTracker(),
      redact: SecretRedactor.fromConfig(ctx.config),
      keyPolicy: keyPolicy(g),
      sticky: new StickyRoutes(g.stickyTtlMs, g.stickyMaxConversations),
    };
    ctx.metrics.addCollector(() => keyMetricLines(ctx.config, Date.now()));
    const lastFlush = startKeyStatsFlush(ctx);
    ctx.onClose.push(async () => {
      // calls whose clients left are still settling: let them book before the store closes
      await inflightOf(ctx).idle(5_000);
      await created.upstreams.close();
      await lastFlush();
    });
    runtimes.set(ctx, created);
    gw = created;
  }
  return gw;
}
