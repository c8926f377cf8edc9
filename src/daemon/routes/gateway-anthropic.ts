import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AnthropicErrorBody, compatErrors, CountTokensAnswer, CountTokensBody, MessagesAnswer, MessagesBody, MessagesHeaders } from '../../shared/schemas/gateway-compat.js';
import { requireGatewayAuth } from '../gateway/auth.js';
import { unifiedChat } from '../gateway/chat-call.js';
import { anthropicError, reshapeErrors } from '../gateway/compat-errors.js';
import { countTokens } from '../gateway/count-tokens.js';
import { gatewayOf } from '../gateway/runtime.js';
import { requireMessagesBody } from '../gateway/validate-messages.js';
import type { RouteOptions } from './index.js';

/**
 * The Anthropic-compatible base URL, {base_url}/gateway: `POST v1/messages` takes a
 * Messages body (key as `x-api-key` or Bearer; `?beta=true`, anthropic-version and
 * anthropic-beta accepted), resolves `model` as unified chat does and answers in the
 * Messages shape whatever provider serves it (streams as Messages events); `POST
 * v1/messages/count_tokens` is free. Errors here are Anthropic's error object plus
 * `error.code` (same status), so the Anthropic SDK and Claude Code show agw's message.
 */
const gatewayAnthropic: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const gw = gatewayOf(ctx);
  app.addHook('onSend', reshapeErrors(anthropicError));

  app.post(
    '/gateway/v1/messages',
    {
      onRequest: requireGatewayAuth(ctx, true),
      preValidation: requireMessagesBody,
      // answered without fastify's pipeline when every check passes, errors in the same shape (daemon/fast-lane/chat.ts)
      config: { fastLane: { shape: anthropicError } },
      schema: {
        tags: ['gateway'],
        summary: 'Anthropic-compatible unified chat (Messages API): aliases, tools, thinking and streaming, answered in the Messages shape',
        security: [{ bearer: [] }],
        headers: MessagesHeaders,
        body: MessagesBody,
        response: { 200: MessagesAnswer, ...compatErrors(AnthropicErrorBody, 400, 401, 402, 403, 429, 503) },
      },
    },
    // the reply itself comes back (fastify's way for a handler that sent it)
    (req, reply) => unifiedChat(ctx, gw, req, reply, { inbound: 'messages', answer: 'messages' }) as Promise<never>,
  );

  app.post(
    '/gateway/v1/messages/count_tokens',
    {
      onRequest: requireGatewayAuth(ctx, true),
      preValidation: requireMessagesBody,
      schema: {
        tags: ['gateway'],
        summary: 'Input tokens of a Messages body at the provider its model resolves to: free, unmetered',
        security: [{ bearer: [] }],
        headers: MessagesHeaders,
        body: CountTokensBody,
        response: { 200: CountTokensAnswer, ...compatErrors(AnthropicErrorBody, 400, 401, 403, 429, 503) },
      },
    },
    (req) => countTokens(ctx, gw, req),
  );
};

export default gatewayAnthropic;
