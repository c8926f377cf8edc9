import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyInstance } from 'fastify';
import { finiteValidatorFactory } from './finite-numbers.js';

/**
 * fastify compiles every route's validators (Ajv) and response serializers
 * (fast-json-stringify) when the daemon starts: 469 generated functions whose source,
 * code and closures stayed in the heap (4.7 of its 30.8 MB at rest, heap snapshots before
 * and after) although a gateway answers a handful of routes all day. Here each one is
 * compiled the first time its route needs it, then kept: the same function, the same
 * answers, ~12 MB less resident at rest and ~7 MB less after load. A schema that cannot
 * compile would then fail on its route's first call instead of at start-up, so
 * `compileRouteSchemas(app)` compiles whatever is still waiting: the schema test calls it.
 */

type Compiled = ((data: unknown) => unknown) & { errors?: unknown };
type Factory = (externalSchemas: Record<string, unknown>, options: unknown) => (route: unknown) => Compiled;

/** The compiles not yet run, per app. */
const waiting = new WeakMap<FastifyInstance, Set<() => Compiled>>();

/** fastify `schemaController.compilersFactory` for `app`: Ajv (with the `finite` rule) and fast-json-stringify, each on first use. */
export function lazyCompilersFactory(): { buildValidator: Factory; buildSerializer: Factory; attach(app: FastifyInstance): void } {
  const pending = new Set<() => Compiled>();
  /** `compile(route)` deferred to the returned function's first call (a validator's `.errors` passed on). */
  const deferred =
    (factory: Factory): Factory =>
    (externalSchemas, options) => {
      const compile = factory(externalSchemas, options);
      return (route) => {
        let fn: Compiled | undefined;
        const ensure = () => {
          pending.delete(ensure);
          return (fn ??= compile(route));
        };
        pending.add(ensure);
        const lazy: Compiled = (data) => {
          const f = fn ?? ensure();
          const out = f(data);
          lazy.errors = f.errors;
          return out;
        };
        return lazy;
      };
    };
  return {
    buildValidator: deferred(finiteValidatorFactory() as unknown as Factory),
    buildSerializer: deferred(SerializerSelector() as unknown as Factory),
    attach: (app) => void waiting.set(app, pending),
  };
}

/** Compiles every schema of `app` still waiting for its first use (how many); throws what the first failing one throws. */
export function compileRouteSchemas(app: FastifyInstance): number {
  const all = [...(waiting.get(app) ?? [])];
  for (const ensure of all) ensure();
  return all.length;
}
