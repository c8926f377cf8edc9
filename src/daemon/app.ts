import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import type { AppContext } from './context/index.js';
import { lazyChildLogger } from './logger.js';
import { clientErrorHandler, installErrorHandling, sendFrameworkError } from './errors.js';
import { finiteKeyword } from './finite-numbers.js';
import { lazyCompilersFactory } from './schema-compilers.js';
import { installRouteConventions, openApiTransform, RouteIndex } from './route-conventions.js';
import { registerRoutes } from './routes/index.js';
import { compatShapeFor } from './gateway/compat-errors.js';
import { installFastLane, laneOf, laneRouteHook } from './fast-lane/index.js';

export type App = FastifyInstance;

/** The largest request body any route takes (fastify's limit, and the fast lane's). */
const BODY_LIMIT = 10 * 1024 * 1024;

/** Per-request log lines only at debug/trace (headers included, secrets redacted by the logger). */
class DebugLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }
  override requestCompleted(error: Error | null | undefined, _request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ res: reply, err: error, responseTime: reply.elapsedTime }, 'request errored');
    else reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
  }
}

/** Builds the HTTP application: one error format, metrics, OpenAPI, every route group. */
export async function buildApp(ctx: AppContext): Promise<App> {
  const debug = ctx.log.isLevelEnabled('debug');
  const compilers = lazyCompilersFactory();
  const app = Fastify({
    loggerInstance: ctx.log as unknown as FastifyBaseLogger,
    // no per-request log lines on the hot path unless debugging: metrics count requests, errors are logged
    logController: debug ? new DebugLogController() : new LogController({ disableRequestLogging: true }),
    clientErrorHandler,
    frameworkErrors: sendFrameworkError,
    bodyLimit: BODY_LIMIT,
    // a backstop for every route (fastify's default is no limit): a request not received in
    // full by then is answered 408 by node (see clientErrorHandler); publish uploads have
    // their own, shorter, idle timeout and deadline (marketplace/upload-guard.ts)
    requestTimeout: ctx.config.marketplace.uploadTimeoutMs + 60_000,
    trustProxy: ctx.config.trustProxy as boolean | string,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // allowUnionTypes: chat message content is `type: ['string', 'array']` (see schemas/gateway.ts)
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false, allowUnionTypes: true }, plugins: [finiteKeyword] },
    // every numeric field of every route must be finite (?limit=1e309 is a 400): see
    // finite-numbers.ts; each schema compiled on its route's first use: schema-compilers.ts
    schemaController: { compilersFactory: { buildValidator: compilers.buildValidator, buildSerializer: compilers.buildSerializer } as never },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as FastifyInstance;
  compilers.attach(app);

  // request loggers made only when a request logs (at debug every request does)
  if (!debug) app.setChildLoggerFactory(lazyChildLogger as unknown as Parameters<App['setChildLoggerFactory']>[0]);

  const routes = new RouteIndex();
  installErrorHandling(app, routes, compatShapeFor);
  installRouteConventions(app, routes);

  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    ctx.metrics.observeRequest(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'agw: AI gateway and skill marketplace',
        version: '1.0.0',
        description:
          'Gateway in front of 21 AI providers (proxy, smart routing, unified chat), wallet billing, quotas, entitlements, spend reports, a public price catalog and the skill marketplace.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      tags: [
        { name: 'gateway', description: 'Proxy, smart routing, unified chat, entitlements and aliases' },
        { name: 'wallet', description: 'Balance, transactions and top-up' },
        { name: 'keys', description: 'API keys with limits: budget, rpm, tpm, model allowlist, expiry' },
        { name: 'catalog', description: 'The public price catalog' },
        { name: 'skills', description: 'The skill (plugin) marketplace' },
        { name: 'portal', description: 'Portal session and account pages' },
        { name: 'spend', description: 'Spend reports per provider and project' },
        { name: 'requests', description: 'The request log: every gateway call, live and exported' },
        { name: 'oauth', description: 'OAuth 2.0 / OpenID Connect' },
        { name: 'operations', description: 'Health and metrics' },
      ],
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'agw_ API key or OAuth access token' },
          session: { type: 'apiKey', in: 'cookie', name: 'service_session' },
        },
      },
    },
    transform: openApiTransform as never,
  });

  const lane = laneOf(ctx);
  app.addHook('onRoute', laneRouteHook(lane));
  await registerRoutes(app, ctx);
  installFastLane(app, ctx, lane, BODY_LIMIT);
  return app;
}
