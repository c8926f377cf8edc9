import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler, RouteOptions } from 'fastify';
import { authKindsOf, GATEWAY_CREDENTIALS } from '../auth/principal.js';
import type { Shape } from '../gateway/compat-errors.js';
import { routeValidator, type RouteValidator } from '../schema-compilers.js';
import type { LaneReply } from './reply.js';

/**
 * Unified chat's routes in the fast lane (index.ts). A route declares `config.fastLane`
 * when its whole fastify pipeline is: the gateway's authentication hook (onRequest),
 * fastify's JSON body parser, callback preValidation hooks, a body and a headers schema, and
 * at most an onSend hook that reshapes error bodies (`shape`). The lane runs the same
 * steps with the same functions (secure-json-parse with fastify's options, the route's own
 * hooks, the route's own compiled validators, called as fastify calls them) and answers
 * only when every one passes. When one finds fault, the request goes to fastify with the
 * bytes the lane read (`replayBody`, the route's preParsing hook): every refusal, its
 * status, code, message and shape, is fastify's own, whatever the fault.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** this POST route may be answered by the fast lane (fast-lane/chat.ts) */
    fastLane?: { xApiKey?: boolean; shape?: Shape };
  }
}

type Hook = (req: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) => unknown;

export interface LaneRoute {
  url: string;
  /** the key may come as x-api-key (the route's auth hook's `xApiKey`) */
  xApiKey: boolean;
  /** the route's error shape (its onSend hook's) */
  shape?: Shape;
  handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>;
  preValidation: Hook[];
  /** the route's validators, looked up on first use (null: the route has none for that part) */
  validators?: { body: RouteValidator | null; headers: RouteValidator | null } | false;
}

/** fastify's JSON parser (secure-json-parse, the version fastify itself loads) */
const secureJsonParse = createRequire(createRequire(import.meta.url).resolve('fastify'))('secure-json-parse') as (
  text: string,
  options: { protoAction: string; constructorAction: string },
) => unknown;

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** The lane's view of a route that declares `config.fastLane`, else undefined. */
export function chatRouteOf(route: RouteOptions): LaneRoute | undefined {
  const lane = route.config?.fastLane;
  if (!lane) return undefined;
  // the lane runs the gateway's key check, the body's parse, the preValidation hooks and the schemas: a route with more is not its
  const onRequest = list(route.onRequest as unknown);
  const other = (['preParsing', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError', 'onTimeout', 'onRequestAbort'] as const).filter((h) => route[h] !== undefined);
  if (route.method !== 'POST' || other.length || onRequest.length !== 1 || authKindsOf(onRequest[0]) !== GATEWAY_CREDENTIALS) {
    throw new Error(
      `${String(route.method)} ${route.url}: config.fastLane is for a POST route whose only onRequest hook is the gateway's key check (requireGatewayAuth) and which has no ${other.join(', ') || 'other'} hooks`,
    );
  }
  return {
    url: route.url,
    xApiKey: lane.xApiKey === true,
    shape: lane.shape,
    handler: route.handler as LaneRoute['handler'],
    preValidation: list(route.preValidation as Hook | Hook[] | undefined),
  };
}

/** The request bodies the lane read and handed back to fastify, by request. */
export const replays = new WeakMap<IncomingMessage, Buffer>();

/** The lane's routes' preParsing hook: a body the lane read and handed back is read again from here. */
export const replayBody: preParsingHookHandler = (req, _reply, _payload, done) => {
  const body = replays.get(req.raw);
  if (body === undefined) return done(null);
  replays.delete(req.raw);
  done(null, Readable.from([body], { objectMode: false }) as unknown as Parameters<typeof done>[1]);
};

/**
 * The request made ready as fastify makes it before the route's handler: the body parsed,
 * the preValidation hooks passed, body and headers valid (coerced as fastify coerces them).
 * false: something found fault, or could not be run here; the request goes to fastify.
 */
export function prepared(route: LaneRoute, app: FastifyInstance, req: FastifyRequest, reply: LaneReply, body: Buffer): boolean {
  const v = route.validators ?? (route.validators = validatorsOf(app, route.url));
  if (!v) return false;
  try {
    const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
    req.body = secureJsonParse(body.toString('utf8'), { protoAction: onProtoPoisoning ?? 'error', constructorAction: onConstructorPoisoning ?? 'error' });
  } catch {
    return false;
  }
  for (const hook of route.preValidation) {
    let passed = false;
    try {
      hook.call(app, req, reply as unknown as FastifyReply, (err) => {
        passed = !err;
      });
    } catch {
      return false;
    }
    if (!passed) return false; // a fault, or a hook that did not finish at once
  }
  if (v.body && !valid(v.body, req, 'body', req.body)) return false;
  // on a copy: a fault handed to fastify finds the headers as they came
  if (v.headers && !valid(v.headers, req, 'headers', { ...req.headers })) return false;
  return true;
}

/** As fastify's validateParam: the value (null when absent) validated, a coerced root put back, the outcome. */
function valid(fn: RouteValidator, req: FastifyRequest, part: 'body' | 'headers', value: unknown): boolean {
  let ret: unknown;
  try {
    const data = value === undefined ? null : value;
    (req as unknown as Record<string, unknown>)[part] = data;
    ret = fn.schemaEnv ? fn(data, { parentData: req, parentDataProperty: part }) : fn(data);
  } catch {
    return false;
  }
  if (ret === false || (ret && typeof (ret as { then?: unknown }).then === 'function')) return false;
  if (ret && typeof ret === 'object') {
    if ('error' in ret && (ret as { error?: unknown }).error) return false;
    if ('value' in ret) (req as unknown as Record<string, unknown>)[part] = (ret as { value: unknown }).value;
  }
  return true;
}

/** The route's body and headers validators; false when it validates params or a query string too (not the lane's). */
function validatorsOf(app: FastifyInstance, url: string): NonNullable<LaneRoute['validators']> {
  if (routeValidator(app, 'POST', url, 'params') || routeValidator(app, 'POST', url, 'querystring')) return false;
  return { body: routeValidator(app, 'POST', url, 'body') ?? null, headers: routeValidator(app, 'POST', url, 'headers') ?? null };
}
