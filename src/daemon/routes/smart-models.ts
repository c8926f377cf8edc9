import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SMART_ROUTE_CLASSES, type SmartRouteClass } from '../../shared/config/defaults.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { SmartModelList } from '../../shared/schemas/gateway.js';
import { gatewayUser, requireGatewayAuth } from '../gateway/auth.js';
import { keyAllowlist } from '../gateway/key-refusal.js';
import { allowsTarget } from '../gateway/model-allowlist.js';
import type { RouteOptions } from './index.js';

/**
 * GET /api/external/smart/v1/models: the smart route's classes in the common models-list
 * shape, for tools that list models first (the OpenAI SDK's `models.list`, model pickers).
 * A static path, so it wins over the proxy's `/external/:provider/*`.
 */
const smartModels: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const listedAt = Math.floor(Date.now() / 1000);
  app.get(
    '/external/smart/v1/models',
    {
      onRequest: requireGatewayAuth(ctx, true),
      schema: {
        tags: ['gateway'],
        summary: 'The smart-route classes, in the common models-list shape',
        description: 'Each class this caller may call (a key with a model list: the classes it lists or one of whose candidates it allows).',
        security: [{ bearer: [] }],
        response: { 200: SmartModelList, ...errorResponses(401) },
      },
    },
    async (req) => {
      const keyModels = keyAllowlist(ctx, gatewayUser(req));
      const usable = (cls: SmartRouteClass) => !keyModels || keyModels.names.has(cls) || ctx.config.smartRoutes[cls].some((t) => allowsTarget(keyModels, t));
      return {
        object: 'list' as const,
        data: SMART_ROUTE_CLASSES.filter(usable).map((id) => ({ id, object: 'model' as const, created: listedAt, owned_by: 'agw' })),
      };
    },
  );
};

export default smartModels;
