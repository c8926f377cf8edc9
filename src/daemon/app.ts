import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import type { AppContext } from './context.js';
import { installErrorHandling } from './errors.js';
import { registerRoutes } from './routes/index.js';

export type App = FastifyInstance;

/** Builds the HTTP application: one error format, metrics, OpenAPI, every route group. */
export async function buildApp(ctx: AppContext): Promise<App> {
  const app = Fastify({
    loggerInstance: ctx.log as unknown as FastifyBaseLogger,
    // no per-request log lines on the hot path: metrics count requests, errors are logged
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 10 * 1024 * 1024,
    trustProxy: false,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    ajv: { customOptions: { coerceTypes: 'array', removeAdditional: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as FastifyInstance;

  installErrorHandling(app);

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
      servers: [{ url: '/' }],
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'agw_ API key or OAuth access token' },
          session: { type: 'apiKey', in: 'cookie', name: 'service_session' },
        },
      },
    },
  });

  await registerRoutes(app, ctx);
  return app;
}
