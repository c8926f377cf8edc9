import type { AppContext } from '../context/index.js';
import { Breaker, LatencyTracker } from './breaker.js';
import { Upstreams } from './upstream.js';
import { SecretRedactor } from '../../shared/secret-redactor.js';
import { inflightOf } from './inflight.js';

/** The gateway's long-lived state, one per daemon: upstream pools, breaker, latencies, the secret redactor. */
export interface Gateway {
  upstreams: Upstreams;
  breaker: Breaker;
  latency: LatencyTracker;
  /** built once from the configured provider keys: applied to what goes back from an upstream */
  redact: SecretRedactor;
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
    };
    ctx.onClose.push(async () => {
      // calls whose clients left are still settling: let them book before the store closes
      await inflightOf(ctx).idle(5_000);
      await created.upstreams.close();
    });
    runtimes.set(ctx, created);
    gw = created;
  }
  return gw;
}
