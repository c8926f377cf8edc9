import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { finiteKeyword } from '../../src/daemon/finite-numbers.js';
import { compileRouteSchemas, lazyCompilersFactory } from '../../src/daemon/schema-compilers.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * Route schemas are compiled on their route's first use (daemon/schema-compilers.ts): the
 * deferred validator and serializer must answer
 * exactly as eagerly compiled ones, and since a schema that cannot compile no longer stops
 * the daemon from starting, every route's schemas are compiled here.
 */
const apps: FastifyInstance[] = [];
let td: TestDaemon | undefined;
afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await td?.close();
});

async function appWith(routes: (app: FastifyInstance) => void) {
  const compilers = lazyCompilersFactory();
  const app = Fastify({
    ajv: { customOptions: { coerceTypes: 'array' }, plugins: [finiteKeyword] },
    schemaController: { compilersFactory: { buildValidator: compilers.buildValidator, buildSerializer: compilers.buildSerializer } as never },
  });
  compilers.attach(app);
  routes(app);
  await app.ready();
  apps.push(app);
  return app;
}

const thing = (app: FastifyInstance) =>
  app.post(
    '/thing',
    {
      schema: {
        body: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } },
        response: { 200: { type: 'object', properties: { n: { type: 'number' } } } },
      },
    },
    async (req) => ({ n: (req.body as { n: number }).n, secret: 'never sent' }),
  );

describe('schemas compiled on first use', () => {
  it("a route's first calls compile its schemas and answer as an eager compile does", async () => {
    const app = await appWith(thing);
    const ok = await app.inject({ method: 'POST', url: '/thing', payload: { n: 2 } });
    expect(ok.statusCode).toBe(200);
    // the response schema names only `n`: the serializer leaves the rest out
    expect(ok.json()).toEqual({ n: 2 });
    const bad = await app.inject({ method: 'POST', url: '/thing', payload: { n: 'two' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/body\/n must be number/);
    // the `finite` rule as before: 1e999 parses to Infinity
    const infinite = await app.inject({ method: 'POST', url: '/thing', payload: '{"n":1e999}', headers: { 'content-type': 'application/json' } });
    expect(infinite.statusCode).toBe(400);
    expect(compileRouteSchemas(app)).toBe(0);
  });

  it('a root value is coerced in place, as with an eager compile (Ajv is given its parent)', async () => {
    const app = await appWith((a) => a.post('/n', { schema: { body: { type: 'number' } } }, async (req) => ({ type: typeof req.body, value: req.body })));
    const res = await app.inject({ method: 'POST', url: '/n', payload: '"5"', headers: { 'content-type': 'application/json' } });
    expect(res.json()).toEqual({ type: 'number', value: 5 });
  });

  it('nothing is compiled before first use; compileRouteSchemas compiles what is still waiting, once', async () => {
    const app = await appWith(thing);
    expect(compileRouteSchemas(app)).toBe(2); // /thing's body validator and 200 serializer
    expect(compileRouteSchemas(app)).toBe(0);
    expect((await app.inject({ method: 'POST', url: '/thing', payload: { n: 3 } })).json()).toEqual({ n: 3 });
  });

  it('a schema that cannot compile is named by its route, and stays waiting until it can', async () => {
    const app = await appWith((a) =>
      a.post('/bad', { schema: { body: { type: 'object', properties: { x: { $ref: 'nowhere#/x' } } } } }, async () => ({})),
    );
    expect((await app.inject({ method: 'POST', url: '/bad', payload: { x: 1 } })).statusCode).toBe(500);
    expect(() => compileRouteSchemas(app)).toThrow(/^POST \/bad: the body schema does not compile/);
    expect(() => compileRouteSchemas(app)).toThrow(/POST \/bad/);
  });

  it("every one of the daemon's route schemas compiles", async () => {
    td = await startTestDaemon();
    expect(compileRouteSchemas(td.daemon.app)).toBeGreaterThan(400);
    expect(compileRouteSchemas(td.daemon.app)).toBe(0);
    expect((await td.fetch('/healthz')).status).toBe(200);
  });
});
