import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ChatCompletion, GatewayChatBody, StrictParamsHeaders } from '../../shared/schemas/gateway.js';
import { compatErrors, ModelsList, OpenAiErrorBody } from '../../shared/schemas/gateway-compat.js';
import { gatewayUser, requireGatewayAuth } from '../gateway/auth.js';
import { unifiedChat } from '../gateway/chat-call.js';
import { openAiError, reshapeErrors } from '../gateway/compat-errors.js';
import { keyAllowlist } from '../gateway/key-refusal.js';
import { modelsList } from '../gateway/models-list.js';
import { gatewayOf } from '../gateway/runtime.js';
import { requireModelAndMessages } from '../gateway/validate.js';
import type { RouteOptions } from './index.js';

/**
 * The OpenAI-compatible base URL, {base_url}/gateway/v1: `POST chat/completions` is unified
 * chat answering in the common shape whatever provider serves it (streams as common
 * chunks), `GET models` lists what the caller may call. Errors here are OpenAI's error
 * object (agw's code as `code`, same status), so the OpenAI SDK shows agw's message.
 */
const gatewayOpenAi: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const gw = gatewayOf(ctx);
  app.addHook('onSend', reshapeErrors(openAiError));

  app.post(
    '/gateway/v1/chat/completions',
    {
      onRequest: requireGatewayAuth(ctx),
      preValidation: requireModelAndMessages,
      // answered without fastify's pipeline when every check passes, errors in the same shape (daemon/fast-lane/chat.ts)
      config: { fastLane: { shape: openAiError } },
      schema: {
        tags: ['gateway'],
        summary: 'OpenAI-compatible unified chat: aliases, tools, images and streaming, answered in the common shape',
        security: [{ bearer: [] }],
        headers: StrictParamsHeaders,
        body: GatewayChatBody,
        response: { 200: ChatCompletion, ...compatErrors(OpenAiErrorBody, 400, 401, 402, 403, 429, 503) },
      },
    },
    // the reply itself comes back (fastify's way for a handler that sent it)
    (req, reply) => unifiedChat(ctx, gw, req, reply, { inbound: 'common', answer: 'common' }) as Promise<never>,
  );

  app.get(
    '/gateway/v1/models',
    {
      // the Anthropic SDK's models.list sends its key as x-api-key
      onRequest: requireGatewayAuth(ctx, true),
      schema: {
        tags: ['gateway'],
        summary: 'The aliases and models the caller may call (OpenAI Models list)',
        security: [{ bearer: [] }],
        response: { 200: ModelsList, ...compatErrors(OpenAiErrorBody, 401) },
      },
    },
    async (req) => {
      const u = gatewayUser(req);
      return modelsList(ctx.config, u.tier, keyAllowlist(ctx, u));
    },
  );
};

export default gatewayOpenAi;
