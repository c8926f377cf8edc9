import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import health from './health.js';
import openapi from './openapi.js';
import catalog from './catalog.js';
import wallet from './wallet.js';

/**
 * The route table: every route group is one file, registered here. API routes live
 * under /api; the OIDC discovery document and the web portal at the root.
 */
export async function registerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const api = async (scope: FastifyInstance) => {
    await scope.register(health, { ctx });
    await scope.register(openapi, { ctx });
    await scope.register(catalog, { ctx });
    await scope.register(wallet, { ctx });
  };
  await app.register(api, { prefix: '/api' });
}

export interface RouteOptions {
  ctx: AppContext;
}
