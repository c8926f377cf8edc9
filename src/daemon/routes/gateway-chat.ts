import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { GatewayChatBody, GatewayChatHeaders, ProviderAnswer } from '../../shared/schemas/gateway.js';
import { refuse, reserve, release } from '../money/calls.js';
import { quoteTokens } from '../money/hold.js';
import { gatewayUser, requireGatewayAuth, storeVersionOf } from '../gateway/auth.js';
import { Call, deliver, isEventStream, projectFor, unreachable, upstreamMessage } from '../gateway/relay.js';
import { readErrorBody } from '../gateway/redact.js';
import { CHAT_PROVIDERS, resolveChatModel } from '../gateway/resolve.js';
import { keyAllowlist } from '../gateway/key-refusal.js';
import { KeyModelRefusal } from '../gateway/model-allowlist.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { gatewayOf } from '../gateway/runtime.js';
import { MessagesToCommonSse } from '../gateway/sse-translate.js';
import { toCommonBody, toCommonResponse, toMessagesBody, type CommonChatBody } from '../gateway/translate.js';
import { providerAuthHeaders } from '../gateway/upstream.js';
import { estimatePromptTokens } from '../gateway/usage.js';
import { requireModelAndMessages } from '../gateway/validate.js';
import type { RouteOptions } from './index.js';
import { conversationOf, pinnedKey } from '../gateway/keys/sticky.js';

/** Upstream statuses that mean "this request is wrong", answered as 400 rather than 503. */
const REQUEST_PROBLEMS = new Set([400, 404, 413, 422]);

/**
 * POST /api/gateway/chat: one common chat body for both chat providers. The model (alias
 * or concrete id) is resolved within the caller's tier bands, 1 unit of ai_chat is
 * reserved, the body is translated for the messages-style provider (or gets
 * stream_options.include_usage for the common-format one), and the answer comes back in
 * the provider's own shape, streamed bytes unchanged; with `X-Service-Response-Format:
 * openai` in the common chat shape for either provider (a messages-style answer rewritten
 * as the smart route does; any other value is 400 before anything is reserved). No
 * failover here: a failing upstream answers 503 UPSTREAM_UNREACHABLE (failover is the
 * smart route's job).
 */
/** agw's answer to an upstream's non-2xx: 429 passed on, a wrong request 400, anything else 503. */
function upstreamRefusal(provider: string, status: number, msg: string, retryAfter: string | undefined): AgwError {
  if (status === 429) {
    return new AgwError('UPSTREAM_RATE_LIMITED', `${provider} is rate limiting: ${msg}`, undefined, retryAfter ? { 'retry-after': retryAfter } : undefined);
  }
  if (REQUEST_PROBLEMS.has(status)) return new AgwError('INVALID_REQUEST', `${provider} rejected the request: ${msg}`);
  return new AgwError('UPSTREAM_UNREACHABLE', `upstream ${provider} answered HTTP ${status}: ${msg}`);
}

/** What a call refused for its model is recorded against: the alias's first target, or the model named. */
function refusedTarget(config: ResolvedConfig, model: string): { providerId: string; model: string | null; alias: string | null } {
  const targets = config.aliases.get(model);
  if (targets) return { providerId: targets[0]?.provider ?? CHAT_PROVIDERS[0], model: null, alias: model };
  const slash = model.indexOf('/');
  if (slash > 0) return { providerId: model.slice(0, slash), model: model.slice(slash + 1), alias: null };
  return { providerId: CHAT_PROVIDERS.find((p) => config.models.has(`${p}/${model}`)) ?? CHAT_PROVIDERS[0], model, alias: null };
}

const gatewayChat: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const gw = gatewayOf(ctx);

  app.post(
    '/gateway/chat',
    {
      onRequest: requireGatewayAuth(ctx),
      preValidation: requireModelAndMessages,
      schema: {
        tags: ['gateway'],
        summary: 'Unified chat: alias resolution within the tier bands, translation, streaming',
        security: [{ bearer: [] }],
        headers: GatewayChatHeaders,
        body: GatewayChatBody,
        response: { 200: ProviderAnswer, ...errorResponses(400, 401, 402, 403, 429, 503) },
      },
    },
    async (req, reply) => {
      const u = gatewayUser(req);
      const body = req.body as CommonChatBody;
      const common = req.headers['x-service-response-format'] === 'openai';
      const projectId = await projectFor(ctx, req, u.userId);
      let target;
      try {
        target = resolveChatModel(ctx.config, u.tier, body.model, keyAllowlist(ctx, u));
      } catch (err) {
        // a model outside the tier or the key's list, unknown or without a provider key: a
        // refused call, in the request log like the 402s and 429s
        if (!(err instanceof AgwError)) throw err;
        const refusedAt = err instanceof KeyModelRefusal && err.target;
        throw await refuse(
          ctx,
          {
            userId: u.userId,
            tier: u.tier,
            keyId: u.kind === 'key' ? u.keyId : null,
            keyLimits: u.kind === 'key' ? u.limits : null,
            endpoint: 'chat',
            ...(refusedAt ? { providerId: refusedAt.provider, model: refusedAt.model, alias: null } : refusedTarget(ctx.config, body.model)),
            projectId,
            stream: body.stream === true,
            body,
            traceparent: req.headers.traceparent,
          },
          err,
        );
      }
      const provider = ctx.config.providers.get(target.provider)!;
      const wire = target.provider === 'anthropic' ? toMessagesBody(body, target.model) : toCommonBody(body, target.model);
      const wireText = JSON.stringify(wire);
      const r = await reserve(ctx, {
        userId: u.userId,
        tier: u.tier,
        keyId: u.kind === 'key' ? u.keyId : null,
        keyLimits: u.kind === 'key' ? u.limits : null,
        keyAncestors: u.kind === 'key' ? u.ancestors : undefined,
        storeVersion: storeVersionOf(u),
        usageType: 'ai_chat',
        endpoint: 'chat',
        providerId: target.provider,
        model: target.model,
        alias: target.alias,
        projectId,
        stream: body.stream === true,
        body,
        traceparent: req.headers.traceparent,
        quote: quoteTokens(ctx.config, provider, target.model, wireText, wire),
      });
      const call = new Call(ctx, gw, reply, r);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        accept: body.stream ? 'text/event-stream' : 'application/json',
      };
      providerAuthHeaders(provider, headers);
      // several keys: the conversation's key while it is healthy (its prompt cache is there)
      const conversation = provider.keys.length > 1 && gw.sticky.enabled ? conversationOf(u.userId, body as unknown as Record<string, unknown>) : undefined;
      const now = conversation ? Date.now() : 0;
      let up;
      try {
        const prefer = conversation ? pinnedKey(gw.sticky.get(conversation, now), provider, now) : undefined;
        up = await call.send(provider, { method: 'POST', path: provider.def.chatPath!, headers, body: wireText }, undefined, prefer);
      } catch (err) {
        const e = unreachable(target.provider, err);
        await release(ctx, r, null, { err: e });
        throw e;
      }
      if (up.statusCode < 200 || up.statusCode >= 300) {
        const { body: text } = await readErrorBody(up, gw.redact);
        const ra = up.headers['retry-after'];
        const e = upstreamRefusal(target.provider, up.statusCode, upstreamMessage(text, gw.redact), typeof ra === 'string' ? gw.redact.headerValue(ra) : undefined);
        await release(ctx, r, up.statusCode, { err: e });
        throw e;
      }
      if (conversation && call.key) gw.sticky.remember(conversation, target.provider, target.model, call.key.name, now);
      const rewrite = common && target.provider === 'anthropic';
      const sse = rewrite && isEventStream(up);
      reply
        .code(200)
        .header('content-type', rewrite ? (sse ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8') : gw.redact.headerValue(up.headers['content-type'] ?? 'application/json'))
        .header('cache-control', 'no-cache')
        .header('x-service-resolved-provider', target.provider)
        .header('x-service-resolved-model', target.model)
        .header('x-service-resolved-via-alias', target.viaAlias ? '1' : '0');
      await deliver(call, up, {
        provider,
        model: target.model,
        price: { kind: 'tokens', promptEstimate: estimatePromptTokens(wire) },
        rewriteSse: sse ? new MessagesToCommonSse(target.model, true) : undefined,
        rewriteJson: rewrite ? (b) => toCommonResponse(b, target.model) : undefined,
      });
      return reply;
    },
  );
};

export default gatewayChat;
