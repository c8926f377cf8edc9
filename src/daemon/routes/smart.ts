import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SmartRouteClass } from '../../shared/config/defaults.js';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { ChatCompletion, SmartChatBody } from '../../shared/schemas/gateway.js';
import { release, reserve } from '../money/calls.js';
import { dearest, quoteTokens } from '../money/hold.js';
import { gatewayUser, requireGatewayAuth, storeVersionOf } from '../gateway/auth.js';
import { Call, deliver, isEventStream, projectFor, upstreamMessage } from '../gateway/relay.js';
import { readErrorBody } from '../gateway/redact.js';
import { gatewayOf } from '../gateway/runtime.js';
import { smartCandidates } from '../gateway/smart.js';
import { keyAllowlist, refuseForKey } from '../gateway/key-refusal.js';
import { allowsTarget, KeyModelRefusal } from '../gateway/model-allowlist.js';
import { MessagesToCommonSse } from '../gateway/sse-translate.js';
import { toCommonBody, toCommonResponse, toMessagesBody, type CommonChatBody } from '../gateway/translate.js';
import { providerAuthHeaders, UpstreamError } from '../gateway/upstream.js';
import { estimatePromptTokens } from '../gateway/usage.js';
import { requireModelAndMessages } from '../gateway/validate.js';
import { requireSmartClass } from '../gateway/smart-class.js';
import type { RouteOptions } from './index.js';

/** Upstream statuses that say the request itself is wrong: no other candidate would take it either. */
const REQUEST_PROBLEMS = new Set([400, 413, 422]);

/**
 * POST /api/external/smart/v1/chat/completions: the caller names a class, agw tries its
 * candidates in order (see gateway/smart.ts) and fails over on a 5xx, 429, 401/403,
 * timeout or connection error; 5xx, timeouts and connection errors also count against
 * the provider's circuit breaker. The answer is always in the common chat shape (a
 * messages-style answer is rewritten, stream included), with X-Smart-Route-Provider /
 * X-Smart-Route-Model naming what served it. One quota unit and one booking per call,
 * against the candidate that answered; 503 ALL_CANDIDATES_FAILED when none did.
 */
const smart: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const gw = gatewayOf(ctx);

  app.post(
    '/external/smart/v1/chat/completions',
    {
      onRequest: requireGatewayAuth(ctx, true),
      preValidation: [requireModelAndMessages, requireSmartClass],
      schema: {
        tags: ['gateway'],
        summary: 'Smart-routed chat: the cheapest / fastest / best available provider, with failover',
        security: [{ bearer: [] }],
        body: SmartChatBody,
        response: { 200: ChatCompletion, ...errorResponses(400, 401, 402, 403, 429, 503) },
      },
    },
    async (req, reply) => {
      const u = gatewayUser(req);
      const body = req.body as CommonChatBody;
      const cls = body.model as SmartRouteClass;
      let candidates = smartCandidates(ctx.config, cls, gw);
      const keyModels = keyAllowlist(ctx, u);
      // a key that does not list the class may use the candidates it allows
      const narrowed = keyModels && !keyModels.names.has(cls);
      const refusal = (e: AgwError) =>
        refuseForKey(ctx, req, u, { endpoint: 'smart', providerId: ctx.config.smartRoutes[cls][0]?.provider ?? 'openai', model: null, alias: cls, stream: body.stream === true }, e);
      if (narrowed && !ctx.config.smartRoutes[cls].some((t) => allowsTarget(keyModels, t))) {
        throw await refusal(new KeyModelRefusal(`${cls} (none of its candidates)`, [...keyModels.names]));
      }
      if (narrowed) candidates = candidates.filter((t) => allowsTarget(keyModels, t));
      if (!candidates.length) {
        throw await refusal(new AgwError('ALL_CANDIDATES_FAILED', `no candidate of ${cls} is available: none has a key, or all are cooling down after failures`));
      }
      // every candidate's body as it would be sent: the call holds the dearest of them
      const wires = candidates.map((c) => {
        const provider = ctx.config.providers.get(c.provider)!;
        const messagesStyle = provider.def.usageFormat === 'anthropic';
        const wire = messagesStyle ? toMessagesBody(body, c.model) : toCommonBody(body, c.model);
        const text = JSON.stringify(wire);
        return { c, provider, messagesStyle, wire, text, quote: quoteTokens(ctx.config, provider, c.model, text, wire) };
      });
      const r = await reserve(ctx, {
        userId: u.userId,
        tier: u.tier,
        keyId: u.kind === 'key' ? u.keyId : null,
        keyLimits: u.kind === 'key' ? u.limits : null,
        keyAncestors: u.kind === 'key' ? u.ancestors : undefined,
        storeVersion: storeVersionOf(u),
        usageType: 'ai_chat',
        endpoint: 'smart',
        providerId: candidates[0].provider,
        model: candidates[0].model,
        alias: cls,
        projectId: await projectFor(ctx, req, u.userId),
        stream: body.stream === true,
        body,
        traceparent: req.headers.traceparent,
        quote: dearest(wires.map((w) => w.quote)),
      });
      const call = new Call(ctx, gw, reply, r);
      const tried: string[] = [];
      let lastStatus: number | null = null;
      for (const { c, provider, messagesStyle, wire, text: wireText } of wires) {
        const headers: Record<string, string> = { 'content-type': 'application/json', accept: body.stream ? 'text/event-stream' : 'application/json' };
        providerAuthHeaders(provider, headers);
        let up;
        try {
          up = await call.send(provider, { method: 'POST', path: provider.def.chatPath!, headers, body: wireText }, `${c.provider}/${c.model}`);
        } catch (err) {
          if (call.signal.aborted) break; // the client left: no failover for nobody
          gw.breaker.failure(c.provider);
          tried.push(`${c.provider}/${c.model}: ${err instanceof UpstreamError ? err.outcome : 'failure'}`);
          continue;
        }
        if (up.statusCode < 200 || up.statusCode >= 300) {
          const { body: text } = await readErrorBody(up, gw.redact);
          lastStatus = up.statusCode;
          if (REQUEST_PROBLEMS.has(up.statusCode)) {
            const e = new AgwError('INVALID_REQUEST', `${c.provider} rejected the request: ${upstreamMessage(text, gw.redact)}`);
            await release(ctx, r, up.statusCode, { err: e });
            throw e;
          }
          if (up.statusCode >= 500) gw.breaker.failure(c.provider);
          tried.push(`${c.provider}/${c.model}: HTTP ${up.statusCode}`);
          continue;
        }
        gw.breaker.success(c.provider);
        const sse = isEventStream(up);
        reply
          .code(200)
          .header('content-type', sse ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8')
          .header('cache-control', 'no-cache')
          .header('x-smart-route-provider', c.provider)
          .header('x-smart-route-model', c.model);
        await deliver(call, up, {
          provider,
          model: c.model,
          price: { kind: 'tokens', promptEstimate: estimatePromptTokens(wire) },
          rewriteSse: messagesStyle && sse ? new MessagesToCommonSse(c.model, true) : undefined,
          rewriteJson: messagesStyle ? (b) => toCommonResponse(b, c.model) : undefined,
        });
        return reply;
      }
      const e = new AgwError('ALL_CANDIDATES_FAILED', `every candidate of ${cls} failed: ${tried.join('; ') || 'the client went away'}`);
      await release(ctx, r, lastStatus, { err: e });
      throw e;
    },
  );
};

export default smart;
