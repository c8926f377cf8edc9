import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance } from 'fastify';
import { finiteValidatorFactory } from './finite-numbers.js';

/**
 * fastify compiles every route's validators (Ajv) and response serializers
 * (fast-json-stringify) when the daemon starts: 469 generated functions whose source, code
 * and closures stayed in the heap for good (4.7 of its 30.8 MB live at rest, heap snapshots
 * before and after), although a gateway answers a handful of routes all day. Here each one
 * is compiled the first time its route needs it, then kept: the same function, called as
 * fastify calls it (Ajv's `schemaEnv` and the parent that lets it coerce a root value,
 * `.errors` read through). The price: a route's first call after the daemon starts waits for
 * its compile, up to ~40 ms for the chat body's validator, once. Compiling the gateway's
 * routes before listening instead kept ~4 MB more resident after load (146.9–150.0 against
 * 144.5–146.4 MB over three bench runs each), the difference between meeting the 150 MB
 * target and sitting on it, for routes most daemons never serve.
 *
 * A schema that cannot compile fails its route's first call (500) instead of the start, so
 * `compileRouteSchemas(app)` compiles whatever is still waiting and names the route of the
 * first that fails: a test calls it for every route. fastify's `compileValidationSchema` and
 * `compileSerializationSchema` go through the same factory (agw calls neither).
 */

type Compiled = ((data: unknown, cx?: unknown) => unknown) & { errors?: unknown; schemaEnv?: unknown };
/** A route's compiled validator, as fastify calls it. */
export type RouteValidator = Compiled;
type Factory = (externalSchemas: Record<string, unknown>, options: unknown) => (route: RouteInfo) => Compiled;
/** What fastify passes with each schema (httpPart for a validator, httpStatus for a serializer). */
interface RouteInfo {
  method?: string;
  url?: string;
  httpPart?: string;
  httpStatus?: string;
}

/** The compiles not yet run, per app, with the route each is for. */
const waiting = new WeakMap<FastifyInstance, Map<() => Compiled, RouteInfo>>();
/** Every route's validators, per app, by `METHOD url httpPart` (the fast lane calls a route's own: fast-lane/). */
const validators = new WeakMap<FastifyInstance, Map<string, Compiled>>();

/** fastify `schemaController.compilersFactory`: Ajv (with the `finite` rule) and fast-json-stringify, each on first use; `attach` before the first route. */
export function lazyCompilersFactory(): { buildValidator: Factory; buildSerializer: Factory; attach(app: FastifyInstance): void } {
  const pending = new Map<() => Compiled, RouteInfo>();
  const byRoute = new Map<string, Compiled>();
  const deferred =
    (factory: Factory, record = false): Factory =>
    (externalSchemas, options) => {
      const compile = factory(externalSchemas, options);
      return (route) => {
        let fn: Compiled | undefined;
        const ensure = (): Compiled => {
          if (!fn) {
            fn = compile(route); // throws: stays pending, and fails again on the next call
            pending.delete(ensure);
            // fastify reads schemaEnv before every call: from now on a plain property
            Object.defineProperty(lazy, 'schemaEnv', { value: fn.schemaEnv, configurable: true });
          }
          return fn;
        };
        const lazy: Compiled = (data, cx) => (fn ?? ensure())(data, cx);
        Object.defineProperty(lazy, 'schemaEnv', { get: () => ensure().schemaEnv, configurable: true });
        Object.defineProperty(lazy, 'errors', {
          get: () => fn?.errors,
          set: (v: unknown) => void (fn && (fn.errors = v)),
        });
        pending.set(ensure, route);
        // the route's own compile: the first for its key (a later compileValidationSchema call does not replace it)
        const key = `${route.method} ${route.url} ${route.httpPart}`;
        if (record && !byRoute.has(key)) byRoute.set(key, lazy);
        return lazy;
      };
    };
  return {
    buildValidator: deferred(finiteValidatorFactory() as unknown as Factory, true),
    buildSerializer: deferred(SerializerSelector() as unknown as Factory),
    attach: (app) => {
      waiting.set(app, pending);
      validators.set(app, byRoute);
    },
  };
}

/**
 * The validator fastify calls for one part of a route's request (`body`, `headers`,
 * `querystring`, `params`), the same function; undefined when the route has no schema for it.
 */
export function routeValidator(app: FastifyInstance, method: string, url: string, part: 'body' | 'headers' | 'querystring' | 'params'): Compiled | undefined {
  return validators.get(app)?.get(`${method} ${url} ${part}`);
}

/** Compiles the schemas of `app` still waiting for their first use and returns how many; throws naming the route of the first that cannot compile. */
export function compileRouteSchemas(app: FastifyInstance): number {
  let n = 0;
  for (const [ensure, route] of [...(waiting.get(app) ?? [])]) {
    try {
      ensure();
    } catch (e) {
      const part = route.httpPart ?? (route.httpStatus ? `response ${route.httpStatus}` : 'schema');
      throw new Error(`${route.method} ${route.url}: the ${part} schema does not compile: ${(e as Error).message}`, { cause: e });
    }
    n++;
  }
  return n;
}
