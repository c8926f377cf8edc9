import Fastify from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { finiteKeyword } from '../../src/daemon/finite-numbers.js';
import { compileRouteSchemas, lazyCompilersFactory } from '../../src/daemon/schema-compilers.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * Route schemas are compiled on their route's first use (daemon/schema-compilers.ts): the
 * deferred validator and serializer must answer exactly as eagerly compiled ones, and since
 * a schema that cannot compile no longer stops the daemon from starting, every route's
 * schemas are compiled here.
 */
async function appWithOneRoute() {
  const compilers = lazyCompilersFactory();
  const app = Fastify({ ajv: { customOptions: { coerceTypes: 'array' }, plugins: [finiteKeyword] }, schemaController: { compilersFactory: compilers as never } });
  compilers.attach(app);
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
  await app.ready();
  return app;
}

describe('schemas compiled on first use', () => {
  const apps: { close(): Promise<unknown> }[] = [];
  let td: TestDaemon | undefined;
  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await td?.close();
  });

  it("a route's first calls compile its schemas and answer as an eager compile does", async () => {
    const app = await appWithOneRoute();
    apps.push(app);
    const ok = await app.inject({ method: 'POST', url: '/thing', payload: { n: 2 } });
    expect(ok.statusCode).toBe(200);
    // the response schema names only `n`: the serializer leaves the rest out
    expect(ok.json()).toEqual({ n: 2 });
    const bad = await app.inject({ method: 'POST', url: '/thing', payload: { n: 'two' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/body\/n must be number/);
    // coerced and checked by the `finite` rule as before
    const infinite = await app.inject({ method: 'POST', url: '/thing', payload: '{"n":1e999}', headers: { 'content-type': 'application/json' } });
    expect(infinite.statusCode).toBe(400);
    expect(compileRouteSchemas(app)).toBe(0);
  });

  it('compileRouteSchemas compiles what is still waiting, once', async () => {
    const app = await appWithOneRoute();
    apps.push(app);
    expect(compileRouteSchemas(app)).toBe(2); // the body validator and the 200 serializer
    expect(compileRouteSchemas(app)).toBe(0);
    expect((await app.inject({ method: 'POST', url: '/thing', payload: { n: 3 } })).json()).toEqual({ n: 3 });
  });

  it("every one of the daemon's route schemas compiles", async () => {
    td = await startTestDaemon();
    expect(compileRouteSchemas(td.daemon.app)).toBeGreaterThan(100);
    expect(compileRouteSchemas(td.daemon.app)).toBe(0);
    expect((await td.fetch('/healthz')).status).toBe(200);
  });
});
