import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { RouteOptions } from './index.js';

/** GET /api/healthz and GET /api/metrics (Prometheus text). */
const health: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the daemon answers and its store is reachable',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => {
      await ctx.db.get('SELECT 1 AS ok');
      return { status: 'ok' as const };
    },
  );

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        summary: 'Prometheus metrics',
        response: { 200: Type.String({ description: 'Prometheus text exposition format' }) },
      },
    },
    async (_req, reply) => {
      reply.type('text/plain; version=0.0.4; charset=utf-8');
      return ctx.metrics.render();
    },
  );
};

export default health;
