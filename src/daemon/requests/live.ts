import type { ServerResponse } from 'node:http';
import type { AppContext } from '../context/index.js';
import { requestsByIds, settledKeys, type RequestFilter, type RequestRow } from '../store/requests.js';
import { matches, requestView } from './view.js';

/**
 * The live request log (GET /api/requests/stream): one poller per daemon, running only
 * while someone listens, reads the calls settled since it last looked, whichever daemon
 * booked them (the store is the only source, so several daemons on one PostgreSQL are
 * seen alike), and hands each to the listeners whose filter it passes.
 *
 * Every POLL_MS it reads the (finalized_at, id) keys from LAG_MS before the newest one it
 * has seen (an index-only scan of usage_log_settled), skips the ids it already sent, and
 * fetches the new rows by id. LAG_MS covers a booking committed a little after its
 * settle time (the batch it rides in, clocks of other daemons); a booking committed later
 * than that is not streamed (the list has it). Memory is bounded: the ids of the last
 * LAG_MS, at most MAX_KEYS keys per poll, and per listener MAX_QUEUE unsent events (a
 * listener that falls further behind is told so and disconnected).
 */
const POLL_MS = 1000;
const LAG_MS = 5000;
const KEY_BATCH = 1000;
const MAX_KEYS = 20_000;
const ROW_BATCH = 200;
const MAX_QUEUE = 1000;
const HEARTBEAT_MS = 15_000;

interface Listener {
  res: ServerResponse;
  filter: RequestFilter;
  withUser: boolean;
  queue: string[];
  blocked: boolean;
}

export class LiveRequests {
  private readonly listeners = new Set<Listener>();
  /** ids sent, with their finalized_at, for the last LAG_MS */
  private readonly seen = new Map<string, number>();
  private newest = 0;
  private timer: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;
  /** polls done (tests wait on it) */
  polls = 0;

  constructor(private readonly ctx: AppContext) {}

  get size(): number {
    return this.listeners.size;
  }

  /** Streams the calls settled from now on that pass `filter` to `res` (an SSE response, headers sent). */
  add(res: ServerResponse, filter: RequestFilter, withUser: boolean): void {
    const l: Listener = { res, filter, withUser, queue: [], blocked: false };
    this.listeners.add(l);
    res.on('close', () => this.remove(l));
    res.on('drain', () => this.flush(l));
    if (this.listeners.size === 1) this.start();
  }

  /** Ends every stream (the daemon is shutting down). */
  closeAll(): void {
    for (const l of [...this.listeners]) {
      l.res.end();
      this.remove(l);
    }
  }

  private remove(l: Listener): void {
    if (!this.listeners.delete(l) || this.listeners.size) return;
    if (this.timer) clearTimeout(this.timer);
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.timer = this.heartbeat = null;
  }

  private start(): void {
    // only what settles from now on (less the lag window, whose ids are marked sent below)
    this.newest = Date.now();
    this.seen.clear();
    this.heartbeat = setInterval(() => this.broadcast(': keep-alive\n\n'), HEARTBEAT_MS).unref();
    this.polling = this.poll(true);
  }

  private schedule(): void {
    if (!this.listeners.size || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.polling ??= this.poll(false).finally(() => (this.polling = null));
    }, POLL_MS).unref();
  }

  private async poll(priming: boolean): Promise<void> {
    try {
      const fresh: { at: number; id: string }[] = [];
      let after = { at: this.newest - LAG_MS, id: '' };
      for (let read = 0; read < MAX_KEYS; ) {
        const keys = await settledKeys(this.ctx.db, after, KEY_BATCH);
        for (const k of keys) if (!this.seen.has(k.id)) fresh.push(k);
        read += keys.length;
        if (keys.length < KEY_BATCH) break;
        after = keys[keys.length - 1];
      }
      for (const k of fresh) {
        this.seen.set(k.id, k.at);
        if (k.at > this.newest) this.newest = k.at;
      }
      for (const [id, at] of this.seen) if (at < this.newest - LAG_MS) this.seen.delete(id);
      if (!priming) await this.send(fresh);
    } catch (err) {
      this.ctx.log.warn({ err }, 'the live request log could not read the store; retrying');
    } finally {
      this.polls++;
      if (priming) this.polling = null;
      this.schedule();
    }
  }

  private async send(fresh: { at: number; id: string }[]): Promise<void> {
    for (let i = 0; i < fresh.length && this.listeners.size; i += ROW_BATCH) {
      const part = fresh.slice(i, i + ROW_BATCH);
      const order = new Map(part.map((k, n) => [k.id, n]));
      const rows = (await requestsByIds(this.ctx.db, part.map((k) => k.id))).sort((a, b) => order.get(a.id)! - order.get(b.id)!);
      for (const r of rows) this.dispatch(r);
    }
  }

  private dispatch(r: RequestRow): void {
    let plain: string | undefined;
    let withUser: string | undefined;
    for (const l of this.listeners) {
      if (!matches(l.filter, r)) continue;
      const data = l.withUser ? (withUser ??= JSON.stringify(requestView(r, true))) : (plain ??= JSON.stringify(requestView(r)));
      this.write(l, `id: ${r.created_at}.${r.id}\nevent: request\ndata: ${data}\n\n`);
    }
  }

  private broadcast(chunk: string): void {
    for (const l of this.listeners) this.write(l, chunk);
  }

  private write(l: Listener, chunk: string): void {
    if (l.blocked) {
      if (l.queue.length >= MAX_QUEUE) {
        l.res.end('event: overflow\ndata: {"error":"this client reads too slowly: reconnect, and catch up with GET /api/requests"}\n\n');
        this.remove(l);
        return;
      }
      l.queue.push(chunk);
      return;
    }
    if (!l.res.write(chunk)) l.blocked = true;
  }

  private flush(l: Listener): void {
    l.blocked = false;
    while (l.queue.length && !l.blocked) if (!l.res.write(l.queue.shift()!)) l.blocked = true;
  }
}

const hubs = new WeakMap<AppContext, LiveRequests>();

export function liveOf(ctx: AppContext): LiveRequests {
  let h = hubs.get(ctx);
  if (!h) hubs.set(ctx, (h = new LiveRequests(ctx)));
  return h;
}
