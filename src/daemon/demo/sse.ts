// Writes a pre-built list of SSE frames, one res.write per frame.
import type { SimContext } from './sim-core.js';

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } as const;

/**
 * Sends `frames` as an event stream. With ctx.drop the first two frames are sent
 * and then the socket is destroyed (no terminating chunk). With ctx.chunkDelayMs > 0
 * frames are spaced out by that delay; otherwise they are written back to back.
 */
export function writeSse(ctx: SimContext, frames: string[]): void {
  const { res } = ctx;
  res.writeHead(200, SSE_HEADERS);
  if (ctx.drop) {
    const n = Math.min(2, frames.length);
    for (let i = 0; i < n - 1; i++) res.write(frames[i]);
    if (n === 0) res.destroy();
    else res.write(frames[n - 1], () => res.destroy());
    return;
  }
  const delay = ctx.chunkDelayMs;
  if (delay <= 0) {
    for (let i = 0; i < frames.length; i++) res.write(frames[i]);
    res.end();
    return;
  }
  let i = 0;
  const next = (): void => {
    if (res.destroyed) return;
    res.write(frames[i++]);
    if (i >= frames.length) {
      res.end();
      return;
    }
    const t = setTimeout(() => {
      ctx.timers.delete(t);
      next();
    }, delay);
    ctx.timers.add(t);
  };
  next();
}
