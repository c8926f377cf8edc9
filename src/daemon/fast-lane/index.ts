import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { AppContext } from '../context/index.js';
import { sendError } from '../errors.js';
import { usableCachedKey } from '../auth/key-cache.js';
import { markPhase } from '../telemetry/phases.js';
import { presentedToken } from '../gateway/auth.js';
import { chatRouteOf, prepared, replayBody, replays, type LaneRoute } from './chat.js';
import { LaneReply } from './reply.js';

/**
 * The fast lane: a metered gateway POST answered by its route's own handler without
 * fastify's request pipeline (routing, request and reply objects, hooks, body reader,
 * `reply.send`), which measured 13% of what agw adds to a proxy call (docs/performance.md,
 * stop 41). Two kinds of route take it:
 * - the proxy, `POST /api/external/{provider}/{path}` (its route's handler, routes/proxy.ts),
 *   for a configured provider no other route claims;
 * - unified chat's three doors (`/api/gateway/chat` and the two compatible base URLs),
 *   routes that declare `config.fastLane` (chat.ts): their body parsed, pre-validated and
 *   validated by the route's own functions, and replayed through fastify, the same bytes,
 *   when any of them finds fault, so every refusal is fastify's own.
 *
 * It takes only a request it answers exactly as the route would, decided from the request's
 * head before a byte of its body is read: a POST with a JSON body whose Content-Length is
 * within the body limit, an agw_ key already in memory and valid (gateway/auth.ts), the
 * daemon not closing (and not at all when the log level is debug, where fastify logs every
 * request). Anything else goes to fastify untouched. Its reply does what fastify's
 * `reply.send` does for every payload these handlers send (reply.ts), its errors go through
 * the same `sendError`, and the request is counted in the route's metric.
 */
const PREFIX = '/api/external/';
/** the proxy's route as fastify names it (its metric's label) */
const PROXY_ROUTE = `${PREFIX}:provider/*`;

export interface FastLane {
  /** false: every request goes to fastify (the tests compare both paths) */
  enabled: boolean;
  /** requests the lane took (read) */
  taken: number;
  /** of them, those handed to fastify with their body replayed, because a check found fault */
  replayed: number;
  /** first path segments under /api/external/ that other routes claim (smart): never the lane's */
  claimed: Set<string>;
  /** the routes that declare `config.fastLane`, by path */
  routes: Map<string, LaneRoute>;
  /** the proxy's metered POST route's handler */
  proxy?: LaneRoute['handler'];
}

const lanes = new WeakMap<AppContext, FastLane>();
const noop = () => undefined;

/** The daemon's lane: what it took, whether it is on (tests compare both paths), the routes it serves. */
export function laneOf(ctx: AppContext): FastLane {
  let lane = lanes.get(ctx);
  if (!lane) lanes.set(ctx, (lane = { claimed: new Set(), enabled: true, taken: 0, replayed: 0, routes: new Map() }));
  return lane;
}

/**
 * The lane's onRoute hook (before any route is registered): the proxy's POST route gives its
 * handler; any other route under /api/external/ claims its first segment; a POST route
 * declaring `config.fastLane` is the lane's (and replays what the lane hands back).
 */
export function laneRouteHook(lane: FastLane): (route: RouteOptions) => void {
  return (route) => {
    if (route.url === PROXY_ROUTE) {
      if (route.method === 'POST') lane.proxy = route.handler as LaneRoute['handler'];
    } else if (route.url.startsWith(PREFIX)) lane.claimed.add(route.url.slice(PREFIX.length).split('/')[0]);
    const chat = chatRouteOf(route);
    if (!chat) return;
    lane.routes.set(route.url, chat);
    route.preParsing = replayBody; // chatRouteOf refuses a route with its own
  };
}

/**
 * Puts the lane in front of fastify's request listener (after every route is registered).
 * `bodyLimit`: fastify's; a request announcing more goes to fastify, which refuses it.
 */
export function installFastLane(app: FastifyInstance, ctx: AppContext, lane: FastLane, bodyLimit: number): void {
  const server: Server = app.server;
  const [fastify] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  const proxy = lane.proxy;
  // at debug level every request is logged by fastify's log controller: the lane stays out of the way
  if (!fastify || ctx.log.isLevelEnabled('debug')) return;
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  server.removeListener('request', fastify);
  server.on('request', (raw: IncomingMessage, res: ServerResponse) => {
    if (closing || !lane.enabled || raw.method !== 'POST') return fastify(raw, res);
    const url = raw.url ?? '';
    let provider: string | undefined;
    let route: LaneRoute | undefined;
    if (url.startsWith(PREFIX)) {
      provider = proxy && proxyProvider(ctx, lane, url);
      if (provider === undefined) return fastify(raw, res);
    } else {
      const q = url.indexOf('?');
      route = lane.routes.get(q < 0 ? url : url.slice(0, q));
      if (route === undefined) return fastify(raw, res);
    }
    const principal = jsonBodyWithin(raw, bodyLimit) ? cachedPrincipal(ctx, raw, route ? route.xApiKey : true) : undefined;
    if (principal === undefined) return fastify(raw, res);
    markPhase('authenticated');
    lane.taken++;
    const started = performance.now();
    const chunks: Buffer[] = [];
    // a client gone before its body's end: no 'end', nothing called upstream, nothing to answer
    raw.on('error', noop);
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.once('end', () => {
      markPhase('body');
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const routeUrl = route ? route.url : PROXY_ROUTE;
      const req = laneRequest(ctx, app, raw, routeUrl, provider === undefined ? undefined : { provider }, principal);
      const reply = new LaneReply(raw, res, req, route?.shape);
      if (route !== undefined) {
        const ready = prepared(route, app, req, reply, body);
        if (ready === 'fault') {
          // a fault fastify names its own way: the same bytes through fastify, from the start (fastify counts it)
          lane.replayed++;
          replays.set(raw, body);
          return fastify(raw, res);
        }
        count(ctx, res, routeUrl, started);
        if (ready === 'answered') return;
      } else {
        req.body = body;
        count(ctx, res, routeUrl, started);
      }
      const r = reply as unknown as FastifyReply;
      let answered: Promise<unknown>;
      try {
        answered = (route ? route.handler : proxy!)(req, r);
      } catch (err) {
        return fail(err, req, r);
      }
      answered.then(
        // as fastify: a handler that resolves without answering is a fault of agw's, answered 500
        () => reply.sent || fail(new Error(`the handler of ${routeUrl} resolved without answering`), req, r),
        (err: unknown) => fail(err, req, r),
      );
    });
  });
}

/** As fastify's onResponse hook (app.ts): the request counted once, when the answer is written or the response fails. */
function count(ctx: AppContext, res: ServerResponse, route: string, started: number): void {
  const once = () => {
    res.off('finish', once);
    res.off('error', once);
    ctx.metrics.observeRequest('POST', route, res.statusCode, (performance.now() - started) / 1000);
  };
  res.once('finish', once);
  res.once('error', once);
}

/** `sendError`, and should even that throw, the connection closed: never an exception out of the lane. */
function fail(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  try {
    sendError(err, req, reply);
  } catch (e) {
    req.log.error({ err: e }, 'the fast lane could not answer an error');
    reply.raw.destroy();
  }
}

/** The provider of a proxy POST the lane may take, else undefined (fastify answers it). */
function proxyProvider(ctx: AppContext, lane: FastLane, url: string): string | undefined {
  const slash = url.indexOf('/', PREFIX.length);
  if (slash <= PREFIX.length) return undefined;
  const id = url.slice(PREFIX.length, slash);
  // a plain id (what fastify's router would decode to itself), configured, claimed by no other route
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(id) || lane.claimed.has(id) || !ctx.config.providers.has(id)) return undefined;
  return id;
}

/** A JSON body announced by a Content-Length within the limit (no transfer-encoding). */
function jsonBodyWithin(raw: IncomingMessage, bodyLimit: number): boolean {
  const h = raw.headers;
  if (h['transfer-encoding'] !== undefined) return false;
  const type = h['content-type'];
  if (typeof type !== 'string' || !/^application\/json\s*(;|$)/i.test(type)) return false;
  const length = h['content-length'];
  return typeof length === 'string' && /^\d{1,9}$/.test(length) && Number(length) !== 0 && Number(length) <= bodyLimit;
}

/** The principal of an agw_ key in memory and valid; undefined sends the request to fastify (a miss, an expired key). */
function cachedPrincipal(ctx: AppContext, raw: IncomingMessage, xApiKey: boolean) {
  const token = presentedToken(raw, xApiKey);
  if (!token?.startsWith('agw_')) return undefined;
  try {
    return usableCachedKey(ctx.db, token);
  } catch {
    return undefined; // expired: fastify's hook answers 401 KEY_EXPIRED
  }
}

/** What the handlers, their hooks and `sendError` read of fastify's request. */
function laneRequest(ctx: AppContext, app: FastifyInstance, raw: IncomingMessage, route: string, params: object | undefined, principal: unknown): FastifyRequest {
  return {
    raw,
    headers: raw.headers,
    url: raw.url,
    method: 'POST',
    body: undefined,
    params: params ?? {},
    principal,
    log: ctx.log,
    server: app,
    routeOptions: { method: 'POST', url: route, config: {} },
  } as unknown as FastifyRequest;
}
