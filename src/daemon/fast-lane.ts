import { createRequire } from 'node:module';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from './context/index.js';
import { sendError } from './errors.js';
import { usableCachedKey } from './auth/key-cache.js';
import { markPhase } from './telemetry/phases.js';
import { presentedToken } from './gateway/auth.js';
import { gatewayOf } from './gateway/runtime.js';

/**
 * The proxy's fast lane: `POST /api/external/{provider}/{path}` answered by the route's own
 * handler without fastify's request pipeline (routing, request and reply objects, hooks,
 * body reader, `reply.send`), which measured 13% of what agw adds to a proxy call
 * (docs/performance.md, stop 41); the route's handler comes from routes/proxy.ts
 * (`Gateway.proxyLane`). It takes only a request it answers exactly as the route
 * would, decided from the request's head before a byte of its body is read: a POST, a
 * configured provider no other route claims, a JSON body with a Content-Length within the
 * body limit, an agw_ key already in memory and valid (gateway/auth.ts), the daemon not
 * closing (and not at all when the log level is debug, where fastify logs every request).
 * Anything else goes to fastify untouched. Its reply does what fastify's
 * `reply.send` does for every payload the proxy sends (a Buffer, a string, a stream), its
 * errors go through the same `sendError`, and the request is counted in the route's metric.
 */
const PREFIX = '/api/external/';
/** the proxy's route as fastify names it (its metric's label) */
const ROUTE = `${PREFIX}:provider/*`;
/** fastify's own parser of Content-Type values (charset handling as `reply.send` does it) */
const ContentType = createRequire(import.meta.url)('fastify/lib/content-type.js') as {
  /** parsed once per distinct value (fastify's own cache) */
  from(s: string | undefined): { isEmpty: boolean; mediaType: string; parameters: Map<string, string>; toString(): string };
};

export interface FastLane {
  /** false: every request goes to fastify (the tests compare both paths) */
  enabled: boolean;
  /** requests the lane took */
  taken: number;
  /** first path segments under /api/external/ that other routes claim (smart): never the lane's */
  claimed: Set<string>;
}

const lanes = new WeakMap<AppContext, FastLane>();
const noop = () => undefined;

/** The daemon's lane: what it took, whether it is on (tests compare both paths), the paths other routes claim. */
export function laneOf(ctx: AppContext): FastLane {
  let lane = lanes.get(ctx);
  if (!lane) lanes.set(ctx, (lane = { claimed: new Set(), enabled: true, taken: 0 }));
  return lane;
}

/** Notes a route under /api/external/ other than the proxy's (an onRoute hook): its first segment is never the lane's. */
export function claimExternal(lane: FastLane, url: string): void {
  if (!url.startsWith(PREFIX) || url === ROUTE) return;
  lane.claimed.add(url.slice(PREFIX.length).split('/')[0]);
}

/**
 * Puts the lane in front of fastify's request listener (after every route is registered).
 * `bodyLimit`: fastify's; a request announcing more goes to fastify, which refuses it.
 */
export function installFastLane(app: FastifyInstance, ctx: AppContext, lane: FastLane, bodyLimit: number): void {
  const server: Server = app.server;
  const [fastify] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  const handler = gatewayOf(ctx).proxyLane;
  // at debug level every request is logged by fastify's log controller: the lane stays out of the way
  if (!fastify || !handler || ctx.log.isLevelEnabled('debug')) return;
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  server.removeListener('request', fastify);
  server.on('request', (raw: IncomingMessage, res: ServerResponse) => {
    const provider = closing || !lane.enabled ? undefined : laneProvider(ctx, lane, raw, bodyLimit);
    const principal = provider === undefined ? undefined : cachedPrincipal(ctx, raw);
    if (principal === undefined) return fastify(raw, res);
    markPhase('authenticated');
    lane.taken++;
    const started = performance.now();
    // as fastify's onResponse: once, when the answer is written or the response fails
    const count = () => {
      res.off('finish', count);
      res.off('error', count);
      ctx.metrics.observeRequest('POST', ROUTE, res.statusCode, (performance.now() - started) / 1000);
    };
    res.once('finish', count);
    res.once('error', count);
    const chunks: Buffer[] = [];
    // a client gone before its body's end: no 'end', nothing called upstream, nothing to answer
    raw.on('error', noop);
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.once('end', () => {
      markPhase('body');
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const req = laneRequest(ctx, app, raw, body, provider!, principal);
      const reply = new LaneReply(raw, res, req);
      const r = reply as unknown as FastifyReply;
      handler(req, r).catch((err: unknown) => sendError(err, req, r));
    });
  });
}

/** The provider of a request the lane may take, else undefined (fastify answers it). */
function laneProvider(ctx: AppContext, lane: FastLane, raw: IncomingMessage, bodyLimit: number): string | undefined {
  if (raw.method !== 'POST') return undefined;
  const url = raw.url ?? '';
  if (!url.startsWith(PREFIX)) return undefined;
  const slash = url.indexOf('/', PREFIX.length);
  if (slash <= PREFIX.length) return undefined;
  const id = url.slice(PREFIX.length, slash);
  // a plain id (what fastify's router would decode to itself), configured, claimed by no other route
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(id) || lane.claimed.has(id) || !ctx.config.providers.has(id)) return undefined;
  const h = raw.headers;
  if (h['transfer-encoding'] !== undefined) return undefined;
  const type = h['content-type'];
  if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) return undefined;
  const length = h['content-length'];
  if (typeof length !== 'string' || !/^\d{1,9}$/.test(length) || Number(length) === 0 || Number(length) > bodyLimit) return undefined;
  return id;
}

/** The principal of an agw_ key in memory and valid; undefined sends the request to fastify (a miss, an expired key). */
function cachedPrincipal(ctx: AppContext, raw: IncomingMessage) {
  const token = presentedToken(raw, true);
  if (!token?.startsWith('agw_')) return undefined;
  try {
    return usableCachedKey(ctx.db, token);
  } catch {
    return undefined; // expired: fastify's hook answers 401 KEY_EXPIRED
  }
}

function laneRequest(ctx: AppContext, app: FastifyInstance, raw: IncomingMessage, body: Buffer, provider: string, principal: unknown): FastifyRequest {
  return {
    raw,
    headers: raw.headers,
    url: raw.url,
    method: 'POST',
    body,
    params: { provider },
    principal,
    log: ctx.log,
    server: app,
  } as unknown as FastifyRequest;
}

/**
 * The part of fastify's reply the proxy's handler and `sendError` use, sending as
 * `reply.send` does: content-type defaults and charset, content-length, no body on 1xx and
 * 204, streams piped with their errors answered or the socket destroyed.
 */
class LaneReply {
  private readonly fields: Record<string, string | number | string[]> = {};
  sent = false;

  constructor(
    private readonly req: IncomingMessage,
    readonly raw: ServerResponse,
    readonly request: FastifyRequest,
  ) {}

  get statusCode(): number {
    return this.raw.statusCode;
  }

  get log() {
    return this.request.log;
  }

  code(n: number): this {
    this.raw.statusCode = n;
    return this;
  }

  status(n: number): this {
    return this.code(n);
  }

  /** As fastify's `reply.header`: a lower-case name; Set-Cookie values accumulate. */
  header(k: string, v: string | number | string[] = ''): this {
    const key = k.toLowerCase();
    const had = this.fields[key];
    if (had && key === 'set-cookie') this.fields[key] = [...(Array.isArray(had) ? had : [String(had)]), ...(Array.isArray(v) ? v : [String(v)])];
    else this.fields[key] = key === 'set-cookie' && Array.isArray(v) ? v.slice() : v;
    return this;
  }

  headers(o: Record<string, string | number | string[] | undefined>): this {
    for (const k of Object.keys(o)) this.header(k, o[k]);
    return this;
  }

  getHeader(k: string) {
    return this.fields[k.toLowerCase()];
  }

  removeHeader(k: string): this {
    delete this.fields[k.toLowerCase()];
    return this;
  }

  type(t: string): this {
    return this.header('content-type', t);
  }

  /** As fastify's `reply.send` followed by its onSendEnd, for the payloads the proxy sends. */
  send(payload?: unknown): this {
    if (this.sent) return this;
    this.sent = true;
    const res = this.raw;
    const status = res.statusCode;
    const isStream = payload !== undefined && payload !== null && typeof (payload as NodeJS.ReadableStream).pipe === 'function';
    if (payload !== undefined && payload !== null && !isStream) {
      const type = this.fields['content-type'];
      const ct = ContentType.from(type === undefined ? undefined : String(type));
      if (Buffer.isBuffer(payload)) {
        if (ct.isEmpty) this.fields['content-type'] = 'application/octet-stream';
      } else if (typeof payload === 'string') {
        if (ct.isEmpty) this.fields['content-type'] = 'text/plain; charset=utf-8';
        else if (ct.mediaType.includes('json') && !ct.parameters.has('charset')) this.fields['content-type'] = `${ct.toString()}; charset=utf-8`;
      } else {
        throw new TypeError('the proxy lane sends Buffers, strings and streams');
      }
    }
    if (payload === undefined || payload === null) {
      if (status >= 200 && status !== 204 && status !== 304) this.fields['content-length'] = '0';
      res.writeHead(status, this.fields);
      res.end();
      return this;
    }
    if ((status >= 100 && status < 200) || status === 204) {
      delete this.fields['content-type'];
      delete this.fields['content-length'];
      res.writeHead(status, this.fields);
      res.end();
      if (isStream) {
        (payload as NodeJS.ReadableStream).on('error', noop);
        (payload as NodeJS.ReadableStream).resume();
      }
      return this;
    }
    if (isStream) {
      this.stream(payload as NodeJS.ReadableStream & { destroy?: () => void });
      return this;
    }
    const length = Buffer.byteLength(payload as Buffer | string);
    const given = this.fields['content-length'];
    if (!given || Number(given) !== length) this.fields['content-length'] = String(length);
    res.writeHead(status, this.fields);
    res.end(payload);
    return this;
  }

  /** As fastify's sendStream: headers set (not written), piped; an error before the head is answered, after it the socket goes. */
  private stream(payload: NodeJS.ReadableStream & { destroy?: () => void }): void {
    const res = this.raw;
    let open = true;
    finished(payload, { readable: true, writable: false } as never, (err) => {
      open = false;
      if (err == null) return;
      if (res.headersSent || (this.req as { aborted?: boolean }).aborted === true) {
        this.request.log.warn({ err }, 'response stream failed');
        res.destroy();
      } else {
        this.sent = false;
        sendError(err, this.request, this as unknown as FastifyReply);
      }
    });
    finished(res, (err) => {
      if (!open) return;
      if (err != null && res.headersSent) this.request.log.warn({ err }, 'response ended before its stream');
      if (typeof payload.destroy === 'function') payload.destroy();
    });
    for (const k of Object.keys(this.fields)) res.setHeader(k, this.fields[k]);
    payload.pipe(res);
  }
}
