import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { SmartRouteClass } from '../../shared/config/defaults.js';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { ChatCompletion, SmartChatBody, StrictParamsHeaders } from '../../shared/schemas/gateway.js';
import { release, reserve } from '../money/calls.js';
import { dearest, quoteTokens } from '../money/hold.js';
import { unpricedError, unpricedFeature } from '../money/unpriced.js';
import { callerOf, gatewayUser, requireGatewayAuth } from '../gateway/auth.js';
import { Call, isEventStream, projectFor, upstreamMessage } from '../gateway/relay.js';
import { readErrorBody } from '../gateway/redact.js';
import { gatewayOf } from '../gateway/runtime.js';
import { smartCandidates } from '../gateway/smart.js';
import { keyAllowlist, refuseForKey } from '../gateway/key-refusal.js';
import { allowsTarget, KeyModelRefusal } from '../gateway/model-allowlist.js';
import { deliverChat, droppedHeader, maxOutputOf, strictParams, unsupported } from '../gateway/chat-call.js';
import { countImages, promptBoundWithImages } from '../gateway/image-tokens.js';
import { answerRewriters } from '../gateway/translate/answer.js';
import { chatOutbound, cloudRewriters, isAwsEventStream } from '../gateway/cloud-chat.js';
import { providerAuthHeaders, UpstreamError } from '../gateway/upstream.js';
import { requireModelAndMessages } from '../gateway/validate.js';
import { requireSmartClass } from '../gateway/smart-class.js';
import type { RouteOptions } from './index.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import type { Target } from '../../shared/config/defaults.js';
import { KeysExhausted } from '../gateway/keys/pick.js';
import { conversationOf, pinnedKey, type Pin } from '../gateway/keys/sticky.js';

/** The candidates with the pinned one first, when it is among them (its provider healthy) and its key is not cooling down. */
function pinFirst(config: ResolvedConfig, candidates: Target[], pin: Pin, now: number): Target[] {
  const at = candidates.findIndex((t) => t.provider === pin.provider && t.model === pin.model);
  if (at <= 0 || !pinnedKey(pin, config.providers.get(pin.provider)!, now)) return candidates;
  return [candidates[at], ...candidates.slice(0, at), ...candidates.slice(at + 1)];
}

/** Upstream statuses that say the request itself is wrong: no other candidate would take it either. */
const REQUEST_PROBLEMS = new Set([400, 413, 422]);

/**
 * POST /api/external/smart/v1/chat/completions: the caller names a class, agw tries its
 * candidates in order (see gateway/smart.ts) and fails over on a 5xx, 429, 401/403,
 * timeout or connection error; 5xx, timeouts and connection errors also count against
 * the provider's circuit breaker. Each candidate gets the body in its own format
 * (translate/plan.ts); candidates that can honour every field the caller sent are tried
 * first, and with X-Service-Strict-Params: 1 only they are. The answer is always in the
 * common chat shape (rewritten, stream included), with X-Smart-Route-Provider /
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
        headers: StrictParamsHeaders,
        body: SmartChatBody,
        response: { 200: ChatCompletion, ...errorResponses(400, 401, 402, 403, 429, 503) },
      },
    },
    async (req, reply) => {
      const u = gatewayUser(req);
      const body = req.body as Record<string, unknown> & { model: string; stream?: boolean };
      const cls = body.model as SmartRouteClass;
      let candidates = smartCandidates(ctx.config, cls, gw);
      // a conversation stays where its last call was served while that key is healthy: the
      // cheapest-first order applies to its first call (CONTRACT "Calls stay where their prompt cache is")
      const choice = candidates.length > 1 || (ctx.config.providers.get(candidates[0]?.provider ?? '')?.keys.length ?? 0) > 1;
      const conversation = gw.sticky.enabled && choice ? conversationOf(u.userId, body as unknown as Record<string, unknown>) : undefined;
      const now = Date.now();
      const pin = conversation ? gw.sticky.get(conversation, now) : undefined;
      if (pin) candidates = pinFirst(ctx.config, candidates, pin, now);
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
      const extra = unpricedFeature(body);
      if (extra !== undefined) throw unpricedError(extra, candidates[0].provider);
      // every candidate's body as it would be sent: the call holds the dearest of them
      const wires = candidates.map((c) => {
        const provider = ctx.config.providers.get(c.provider)!;
        const out = chatOutbound({ format: 'common', body }, { provider, model: c.model, maxOutput: maxOutputOf(ctx.config, c.provider, c.model) });
        const images = countImages(out.format, out.body, out.text, c.provider, c.model);
        return { c, provider, out, images, quote: quoteTokens(ctx.config, provider, c.model, out.text, out.body, true, images && promptBoundWithImages(out.text, images)) };
      });
      // failover never gives up what the caller asked for while a candidate can honour it all:
      // those go first (in class order); strict, they are the only ones
      const honouring = wires.filter((w) => !w.out.dropped.length);
      if (strictParams(req) && !honouring.length) throw unsupported(wires[0].out, wires[0].c.provider);
      const order = strictParams(req) ? honouring : [...honouring, ...wires.filter((w) => w.out.dropped.length)];
      const project = projectFor(ctx, req, u.userId);
      const r = await reserve(ctx, callerOf(u), {
        usageType: 'ai_chat',
        endpoint: 'smart',
        providerId: order[0].c.provider,
        model: order[0].c.model,
        alias: cls,
        projectId: project && (await project),
        stream: body.stream === true,
        body,
        traceparent: req.headers.traceparent,
        quote: dearest(order.map((w) => w.quote)),
      });
      const call = new Call(ctx, gw, reply, r);
      const tried: string[] = [];
      let lastStatus: number | null = null;
      for (const { c, provider, out, quote } of order) {
        const headers: Record<string, string> = { 'content-type': 'application/json', accept: body.stream ? 'text/event-stream' : 'application/json', ...out.headers };
        providerAuthHeaders(provider, headers);
        r.droppedParams = out.dropped;
        let up;
        try {
          up = await call.send(provider, { method: 'POST', path: out.path, query: out.query, headers, body: out.text }, `${c.provider}/${c.model}`, pinnedKey(pin, provider, now));
        } catch (err) {
          if (call.signal.aborted) break; // the client left: no failover for nobody
          if (err instanceof KeysExhausted) {
            // every key at its own rpm/tpm: not a failure of the provider
            tried.push(`${c.provider}/${c.model}: every key at its rate limit`);
            continue;
          }
          gw.breaker.failure(c.provider);
          tried.push(`${c.provider}/${c.model}: ${err instanceof UpstreamError ? err.outcome : 'failure'}`);
          continue;
        }
        if (up.statusCode < 200 || up.statusCode >= 300) {
          const { body: text } = await readErrorBody(up, call.redact);
          lastStatus = up.statusCode;
          if (REQUEST_PROBLEMS.has(up.statusCode)) {
            const e = new AgwError('INVALID_REQUEST', `${c.provider} rejected the request: ${upstreamMessage(text, call.redact)}`);
            await release(ctx, r, up.statusCode, { err: e });
            throw e;
          }
          if (up.statusCode >= 500) gw.breaker.failure(c.provider);
          tried.push(`${c.provider}/${c.model}: HTTP ${up.statusCode}`);
          continue;
        }
        gw.breaker.success(c.provider);
        if (conversation && call.key) gw.sticky.remember(conversation, c.provider, c.model, call.key.name, now);
        const sse = isEventStream(up) || isAwsEventStream(up);
        const rw = cloudRewriters(out, up, answerRewriters(out.format, 'common', c.model, provider.def.chat?.cachedTokensField), c.model);
        reply
          .code(200)
          .header('content-type', sse ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8')
          .header('cache-control', 'no-cache')
          .header('x-smart-route-provider', c.provider)
          .header('x-smart-route-model', c.model)
          .header('x-service-dropped-params', droppedHeader(out.dropped));
        await deliverChat(call, up, provider, c.model, out, quote, rw, sse);
        return reply;
      }
      const e = new AgwError('ALL_CANDIDATES_FAILED', `every candidate of ${cls} failed: ${tried.join('; ') || 'the client went away'}`);
      await release(ctx, r, lastStatus, { err: e });
      throw e;
    },
  );
};

export default smart;
