import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingHookHandler, RouteOptions } from 'fastify';
import { gatewayAuthOf } from '../gateway/auth.js';
import type { Shape } from '../gateway/compat-errors.js';
import { routeValidator, type RouteValidator } from '../schema-compilers.js';
import type { LaneReply } from './reply.js';

/**
 * Unified chat's routes in the fast lane (index.ts). A route declares `config.fastLane`
 * when its whole fastify pipeline is: the gateway's key check (`requireGatewayAuth`, its
 * only onRequest hook; whether it takes x-api-key is read off the hook), fastify's JSON body
 * parser, callback preValidation hooks, a body and a headers schema, and, registered in its
 * plugin, at most an onSend hook that reshapes error bodies, which the lane applies as
 * `shape` (test/api/chat-fast-lane.test.ts checks each lane route's hooks after start-up).
 * The lane runs the same steps with the same functions (secure-json-parse with fastify's
 * options, the route's own hooks, the route's own compiled validators, called as fastify
 * calls them) and answers only when every one passes. When one finds fault, the request
 * goes to fastify with the bytes the lane read (`replayBody`, the route's preParsing hook):
 * every refusal, its status, code, message and shape, is fastify's own, whatever the fault.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** this POST route may be answered by the fast lane (fast-lane/chat.ts); `shape`: its plugin's onSend error shape */
    fastLane?: { shape?: Shape };
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
  /** the schema parts the route validates */
  validates: { body: boolean; headers: boolean };
  /** the route's validators, looked up on first use (null: the route has none for that part; false: one is missing, so fastify answers) */
  validators?: { body: RouteValidator | null; headers: RouteValidator | null } | false;
}

/** fastify's JSON parser (secure-json-parse, the version fastify itself loads) */
const secureJsonParse = createRequire(createRequire(import.meta.url).resolve('fastify'))('secure-json-parse') as (
  text: string,
  options: { protoAction: string; constructorAction: string },
) => unknown;

const list = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/** Route options that change how fastify reads, checks or answers a request: the lane runs none of them. */
const UNRUN = [
  'preParsing',
  'preHandler',
  'preSerialization',
  'onSend',
  'onResponse',
  'onError',
  'onTimeout',
  'onRequestAbort',
  'bodyLimit',
  'errorHandler',
  'validatorCompiler',
  'schemaErrorFormatter',
  'attachValidation',
] as const;

/**
 * The lane's view of a route that declares `config.fastLane`, else undefined; throws (the
 * daemon does not start) for a route whose pipeline has more than the lane runs.
 */
export function chatRouteOf(route: RouteOptions): LaneRoute | undefined {
  const lane = route.config?.fastLane;
  if (!lane) return undefined;
  const onRequest = list(route.onRequest as unknown);
  const auth = onRequest.length === 1 ? gatewayAuthOf(onRequest[0]) : undefined;
  const schema = (route.schema ?? {}) as { body?: { content?: unknown }; headers?: unknown; params?: unknown; querystring?: unknown };
  const other: string[] = UNRUN.filter((h) => route[h] !== undefined && route[h] !== false); // fastify fills attachValidation: false
  for (const part of ['params', 'querystring'] as const) if (schema[part] !== undefined) other.push(`a ${part} schema`);
  if (schema.body?.content !== undefined) other.push('a body schema per content type');
  if (route.method !== 'POST' || !auth || other.length) {
    throw new Error(
      `${String(route.method)} ${route.url}: config.fastLane is for a POST route whose only onRequest hook is the gateway's key check (requireGatewayAuth)${other.length ? `, without ${other.join(', ')}` : ''}`,
    );
  }
  return {
    url: route.url,
    xApiKey: auth.xApiKey,
    shape: lane.shape,
    handler: route.handler as LaneRoute['handler'],
    preValidation: list(route.preValidation as Hook | Hook[] | undefined),
    validates: { body: schema.body !== undefined, headers: schema.headers !== undefined },
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
 * 'fault': something found fault, or could not be run here (fastify answers it from the
 * start); 'answered': a hook answered it itself (none of agw's does), nothing more to do.
 */
export function prepared(route: LaneRoute, app: FastifyInstance, req: FastifyRequest, reply: LaneReply, body: Buffer): 'ready' | 'fault' | 'answered' {
  const v = route.validators ?? (route.validators = validatorsOf(app, route));
  if (!v) return 'fault';
  try {
    const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
    req.body = secureJsonParse(body.toString('utf8'), { protoAction: onProtoPoisoning ?? 'error', constructorAction: onConstructorPoisoning ?? 'error' });
  } catch {
    return 'fault';
  }
  for (const hook of route.preValidation) {
    let passed = false;
    try {
      hook.call(app, req, reply as unknown as FastifyReply, (err) => {
        passed = !err;
      });
    } catch {
      passed = false;
    }
    if (reply.sent) return 'answered';
    if (!passed) return 'fault'; // a fault, or a hook that did not finish at once
  }
  if (v.body && !valid(v.body, req, 'body', req.body)) return 'fault';
  // on a copy: a fault handed to fastify finds the headers as they came
  if (v.headers && !valid(v.headers, req, 'headers', { ...req.headers })) return 'fault';
  return 'ready';
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

/** The route's body and headers validators, as fastify compiled them; false when one it declares is not on record. */
function validatorsOf(app: FastifyInstance, route: LaneRoute): NonNullable<LaneRoute['validators']> {
  const body = routeValidator(app, 'POST', route.url, 'body') ?? null;
  const headers = routeValidator(app, 'POST', route.url, 'headers') ?? null;
  if ((route.validates.body && !body) || (route.validates.headers && !headers)) return false;
  return { body, headers };
}
