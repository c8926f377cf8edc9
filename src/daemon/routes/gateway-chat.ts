import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas/common.js';
import { GatewayChatBody, GatewayChatHeaders, ProviderAnswer } from '../../shared/schemas/gateway.js';
import { requireGatewayAuth } from '../gateway/auth.js';
import { unifiedChat, type ChatCallOptions } from '../gateway/chat-call.js';
import { gatewayOf } from '../gateway/runtime.js';
import { requireModelAndMessages } from '../gateway/validate.js';
import type { RouteOptions } from './index.js';

/** X-Service-Response-Format → the answer's shape (absent or `provider`: the resolved provider's own). */
const ANSWER: Record<string, ChatCallOptions['answer']> = { openai: 'common', anthropic: 'messages', provider: 'provider' };

/**
 * POST /api/gateway/chat: one common chat body for every LLM provider (gateway/chat-call.ts).
 * The answer comes back in the resolved provider's own shape, streamed bytes unchanged;
 * with `X-Service-Response-Format: openai` in the common chat shape, with `anthropic` in the
 * Messages shape, whichever provider served it (any other value is 400 before anything is
 * reserved). A failing upstream answers 503 UPSTREAM_UNREACHABLE (no failover here).
 */
const gatewayChat: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const gw = gatewayOf(ctx);

  app.post(
    '/gateway/chat',
    {
      onRequest: requireGatewayAuth(ctx),
      preValidation: requireModelAndMessages,
      // answered without fastify's pipeline when every check passes (daemon/fast-lane/chat.ts)
      config: { fastLane: {} },
      schema: {
        tags: ['gateway'],
        summary: 'Unified chat: alias resolution within the tier bands, translation, streaming',
        security: [{ bearer: [] }],
        headers: GatewayChatHeaders,
        body: GatewayChatBody,
        response: { 200: ProviderAnswer, ...errorResponses(400, 401, 402, 403, 429, 503) },
      },
    },
    (req, reply) => unifiedChat(ctx, gw, req, reply, { inbound: 'common', answer: ANSWER[req.headers['x-service-response-format'] ?? 'provider'] ?? 'provider' }),
  );
};

export default gatewayChat;
