import type { RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { GATEWAY_CREDENTIALS, markAuthHook } from '../../src/daemon/auth/principal.js';
import { chatRouteOf } from '../../src/daemon/fast-lane/chat.js';
import { requireGatewayAuth } from '../../src/daemon/gateway/auth.js';

/**
 * What a route must be for the fast lane to answer it (daemon/fast-lane/chat.ts): a POST whose
 * pipeline the lane runs itself (the gateway's key check, the JSON body, preValidation hooks,
 * body and headers schemas). A route that declares `config.fastLane` with a route option the
 * lane does not run stops the daemon at start-up instead of being answered without it. (Hooks
 * a route's plugin adds are not route options: test/api/chat-fast-lane.test.ts checks those.)
 */
const handler = async () => undefined;
const hook = (_req: unknown, _reply: unknown, done: () => void) => done();
const gatewayAuth = requireGatewayAuth({} as never);
/** an authentication hook for the same credentials, but not the gateway's key check */
const otherAuth = markAuthHook(function auth(_req: unknown, _reply: unknown, done: () => void) {
  done();
} as never, GATEWAY_CREDENTIALS);
const route = (o: Partial<RouteOptions>): RouteOptions => ({ method: 'POST', url: '/api/x', handler, onRequest: gatewayAuth, ...o }) as RouteOptions;

describe('fast lane: which routes it takes', () => {
  it('a route without config.fastLane is not the lane’s', () => {
    expect(chatRouteOf(route({}))).toBeUndefined();
  });

  it('a POST declaring it: its handler, its preValidation hooks, how its key may come, its error shape', () => {
    const shape = () => ({});
    const r = chatRouteOf(route({ onRequest: requireGatewayAuth({} as never, true), preValidation: hook, schema: { body: {} }, config: { fastLane: { shape } } }));
    expect(r).toMatchObject({ url: '/api/x', xApiKey: true, shape, handler, preValidation: [hook], validates: { body: true, headers: false } });
    expect(chatRouteOf(route({ config: { fastLane: {} } }))).toMatchObject({ xApiKey: false, preValidation: [] });
  });

  it('refuses, at start-up, a route with a hook it would skip, another key check, or a method it does not take', () => {
    const cases = [
      { preHandler: hook },
      { preParsing: hook },
      { preSerialization: hook },
      { onSend: hook },
      { onResponse: hook },
      { onError: hook },
      { onTimeout: hook },
      { onRequestAbort: hook },
      { onRequest: hook },
      { onRequest: otherAuth },
      { onRequest: [gatewayAuth, hook] },
      { onRequest: undefined },
      { bodyLimit: 1024 },
      { errorHandler: () => undefined },
      { validatorCompiler: () => () => true },
      { attachValidation: true },
      { schema: { params: {} } },
      { schema: { querystring: {} } },
      { schema: { body: { content: { 'application/json': { schema: {} } } } } },
      { method: 'GET' },
    ] as Partial<RouteOptions>[];
    for (const o of cases) {
      expect(() => chatRouteOf(route({ ...o, config: { fastLane: {} } })), Object.keys(o)[0]).toThrow(/config\.fastLane/);
    }
  });
});
