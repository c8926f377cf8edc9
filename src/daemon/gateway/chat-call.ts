import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import type { ResolvedConfig, ResolvedProvider } from '../../shared/config/resolve.js';
import { AgwError } from '../../shared/errors.js';
import { DEFAULT_MAX_OUTPUT_TOKENS, type ChatFormat, type UsageFormat } from '../../shared/providers/index.js';
import { MODEL_MAX_LENGTH } from '../../shared/schemas/gateway.js';
import type { AppContext } from '../context/index.js';
import { refuse, release, reserve } from '../money/calls.js';
import { bookingEstimate, quoteTokens, type Quote } from '../money/hold.js';
import { unpricedError, unpricedFeature } from '../money/unpriced.js';
import { callerOf, gatewayUser } from './auth.js';
import { countImages, promptBoundWithImages } from './image-tokens.js';
import { keyAllowlist } from './key-refusal.js';
import { KeyModelRefusal } from './model-allowlist.js';
import { readErrorBody } from './redact.js';
import { Call, deliver, isEventStream, projectFor, unreachable, upstreamMessage } from './relay.js';
import { CHAT_PROVIDERS, resolveChatModel, type ResolvedModel } from './resolve.js';
import type { Gateway } from './runtime.js';
import { answerRewriters, type AnswerFormat } from './translate/answer.js';
import type { InboundFormat, Outbound } from './translate/plan.js';
import { chatApiOf, chatOutbound, cloudRewriters, isAwsEventStream, type ChatOutbound, type Rewriters } from './cloud-chat.js';
import { conversationOf, pinnedKey } from './keys/sticky.js';
import { providerAuthHeaders } from './upstream.js';
import { hidesReasoning } from './usage.js';
import { markPhase } from '../telemetry/phases.js';

/**
 * One unified chat call, whatever door it came in by (POST /gateway/chat, the
 * OpenAI-compatible /gateway/v1/chat/completions, the Anthropic-compatible
 * /gateway/v1/messages): the model resolved within the caller's tier bands and key, the
 * body translated for the resolved provider's format (translate/plan.ts), what it cannot
 * honour named (or, strict, refused before anything is reserved), 1 unit of ai_chat and
 * the call's hold reserved, and the answer passed back in the shape asked for. No
 * failover (that is the smart route's job).
 */
type Obj = Record<string, unknown>;

export interface ChatCallOptions {
  inbound: InboundFormat;
  /** the answer's shape: a format, or the resolved provider's own */
  answer: AnswerFormat | 'provider';
}

/** How usage is read off an answer in each chat format. */
export const USAGE_OF: Record<ChatFormat, UsageFormat> = { common: 'openai', messages: 'anthropic', gemini: 'gemini' };

/** Upstream statuses that mean "this request is wrong", answered as 400 rather than 503. */
const REQUEST_PROBLEMS = new Set([400, 404, 413, 422]);

/** agw's answer to an upstream's non-2xx: 429 passed on, a wrong request 400, anything else 503. */
export function upstreamRefusal(provider: string, status: number, msg: string, retryAfter: string | undefined): AgwError {
  if (status === 429) {
    return new AgwError('UPSTREAM_RATE_LIMITED', `${provider} is rate limiting: ${msg}`, undefined, retryAfter ? { 'retry-after': retryAfter } : undefined);
  }
  if (REQUEST_PROBLEMS.has(status)) return new AgwError('INVALID_REQUEST', `${provider} rejected the request: ${msg}`);
  return new AgwError('UPSTREAM_UNREACHABLE', `upstream ${provider} answered HTTP ${status}: ${msg}`);
}

/** The provider a refused call is recorded against when its model names none agw knows. */
export const UNKNOWN_PROVIDER = 'unknown';

/**
 * What a call refused for its model is recorded against: the alias's first target, the
 * provider a `provider/model` names when agw has it, the catalog's provider of a bare model
 * id; else `unknown`, with the model as asked (at most MODEL_MAX_LENGTH characters of it),
 * so a caller's text never becomes a provider id in the request log.
 */
function refusedTarget(config: ResolvedConfig, asked: string): { providerId: string; model: string | null; alias: string | null } {
  const model = asked.length > MODEL_MAX_LENGTH ? asked.slice(0, MODEL_MAX_LENGTH) : asked;
  const targets = config.aliases.get(asked);
  if (targets) return { providerId: targets[0]?.provider ?? UNKNOWN_PROVIDER, model: null, alias: model };
  const slash = model.indexOf('/');
  if (slash > 0 && config.providers.has(model.slice(0, slash))) return { providerId: model.slice(0, slash), model: model.slice(slash + 1), alias: null };
  return { providerId: CHAT_PROVIDERS.find((p) => config.models.has(`${p}/${model}`)) ?? UNKNOWN_PROVIDER, model, alias: null };
}

/**
 * X-Service-Dropped-Params: the names, comma-separated. A name is the caller's own (a JSON key,
 * a content part's type): one that is not a plain header token is percent-encoded, so no
 * caller's text can break the answer's headers (the request record keeps it as it came).
 */
export function droppedHeader(names: readonly string[]): string {
  let out = '';
  for (const n of names) {
    const safe = /^[\x21-\x2b\x2d-\x7e]{1,128}$/.test(n) ? n : encodeURIComponent(n.slice(0, 128));
    out += out ? `,${safe}` : safe;
  }
  return out;
}

/** The caller's X-Service-Strict-Params: 1. */
export const strictParams = (req: FastifyRequest) => req.headers['x-service-strict-params'] === '1';

/** 400 UNSUPPORTED_PARAMETER for a strict call the provider cannot fully honour. */
export function unsupported(o: Outbound, provider: string): AgwError {
  return new AgwError(
    'UNSUPPORTED_PARAMETER',
    `${provider} cannot honour ${o.dropped.join(', ')} (X-Service-Strict-Params: 1 refuses instead of dropping); nothing was sent or charged`,
    { parameter: o.dropped[0], provider, parameters: o.dropped },
  );
}

/** The model's output limit (a model the catalog does not know: the default). */
export const maxOutputOf = (config: ResolvedConfig, provider: string, model: string) =>
  config.models.get(`${provider}/${model}`)?.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS;

/** The resolved target, or the refusal (recorded in the request log like the 402s and 429s). */
export async function resolveOrRefuse(ctx: AppContext, req: FastifyRequest, body: Obj): Promise<ResolvedModel> {
  const u = gatewayUser(req);
  try {
    return resolveChatModel(ctx.config, u.tier, String(body.model), keyAllowlist(ctx, u));
  } catch (err) {
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
        ...(refusedAt ? { providerId: refusedAt.provider, model: refusedAt.model, alias: null } : refusedTarget(ctx.config, String(body.model))),
        projectId: await projectFor(ctx, req, u.userId),
        stream: body.stream === true,
        body,
        traceparent: req.headers.traceparent,
      },
      err,
    );
  }
}

/** The caller's anthropic-beta header and query string, for a messages-format call. */
export function messagesExtras(req: FastifyRequest): { betas?: string; query?: string } {
  const beta = req.headers['anthropic-beta'];
  const q = req.url.indexOf('?');
  return { betas: typeof beta === 'string' && beta ? beta : Array.isArray(beta) ? beta.join(',') : undefined, query: q >= 0 ? req.url.slice(q + 1) : undefined };
}

export async function unifiedChat(ctx: AppContext, gw: Gateway, req: FastifyRequest, reply: FastifyReply, o: ChatCallOptions): Promise<FastifyReply> {
  markPhase('handling');
  const u = gatewayUser(req);
  const body = req.body as Obj;
  const target = await resolveOrRefuse(ctx, req, body);
  const provider = ctx.config.providers.get(target.provider)!;
  const out = chatOutbound(
    { format: o.inbound, body, ...(o.inbound === 'messages' ? messagesExtras(req) : {}) },
    { provider, model: target.model, maxOutput: maxOutputOf(ctx.config, target.provider, target.model) },
  );
  if (out.dropped.length && strictParams(req)) throw unsupported(out, target.provider);
  const extra = unpricedFeature(out.body);
  if (extra !== undefined) throw unpricedError(extra, target.provider);
  const images = countImages(out.format, out.body, out.text, target.provider, target.model);
  const quote = quoteTokens(ctx.config, provider, target.model, out.text, out.body, true, images && promptBoundWithImages(out.text, images));
  const project = projectFor(ctx, req, u.userId);
  const r = await reserve(ctx, callerOf(u), {
    usageType: 'ai_chat',
    endpoint: 'chat',
    providerId: target.provider,
    model: target.model,
    alias: target.alias,
    projectId: project && (await project),
    stream: body.stream === true,
    body,
    traceparent: req.headers.traceparent,
    quote,
  });
  r.droppedParams = out.dropped;
  const call = new Call(ctx, gw, reply, r);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: body.stream === true ? 'text/event-stream' : 'application/json',
    ...out.headers,
  };
  providerAuthHeaders(provider, headers);
  // several keys: the conversation's key while it is healthy (its prompt cache is there)
  const conversation = provider.keys.length > 1 && gw.sticky.enabled ? conversationOf(u.userId, body) : undefined;
  const now = conversation ? Date.now() : 0;
  let up;
  try {
    const prefer = conversation ? pinnedKey(gw.sticky.get(conversation, now), provider, now) : undefined;
    up = await call.send(provider, { method: 'POST', path: out.path, query: out.query, headers, body: out.text }, undefined, prefer);
  } catch (err) {
    const e = unreachable(target.provider, err);
    await release(ctx, r, null, { err: e });
    throw e;
  }
  if (up.statusCode < 200 || up.statusCode >= 300) {
    const { body: text } = await readErrorBody(up, call.redact);
    const ra = up.headers['retry-after'];
    const e = upstreamRefusal(target.provider, up.statusCode, upstreamMessage(text, call.redact), typeof ra === 'string' ? call.redact.headerValue(ra) : undefined);
    await release(ctx, r, up.statusCode, { err: e });
    throw e;
  }
  if (conversation && call.key) gw.sticky.remember(conversation, target.provider, target.model, call.key.name, now);
  // a cloud's own answer shapes become the messages format's first (cloud-chat.ts)
  const inner = o.answer === 'provider' ? answerRewriters(out.format, out.format, target.model) : answerRewriters(out.format, o.answer, target.model, provider.def.chat?.cachedTokensField);
  const rw = cloudRewriters(out, up, inner, target.model);
  const sse = isEventStream(up) || isAwsEventStream(up);
  reply
    .code(200)
    .header(
      'content-type',
      rw.json ? (sse ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8') : call.redact.headerValue(up.headers['content-type'] ?? 'application/json'),
    )
    .header('cache-control', 'no-cache')
    .header('x-service-resolved-provider', target.provider)
    .header('x-service-resolved-model', target.model)
    .header('x-service-resolved-via-alias', target.viaAlias ? '1' : '0')
    .header('x-service-dropped-params', droppedHeader(out.dropped));
  await deliverChat(call, up, provider, target.model, out, quote, rw, sse);
  return reply;
}

/**
 * A chat call's 2xx answer passed back in the caller's shape and booked (unified chat and
 * the smart route): usage read as the provider's chat API reports it, an answer without
 * usage booked for the quote's estimate (hidden reasoning counted in).
 */
export function deliverChat(call: Call, up: Dispatcher.ResponseData, provider: ResolvedProvider, model: string, out: ChatOutbound, quote: Quote, rw: Rewriters, sse: boolean): Promise<void> {
  return deliver(call, up, {
    provider,
    model,
    usageFormat: out.cloud?.usageFormat ?? USAGE_OF[out.format],
    price: { kind: 'tokens', ...bookingEstimate(quote, hidesReasoning(chatApiOf(provider.def, model), model, out.body)) },
    rewriteSse: sse && rw.sse ? rw.sse() : undefined,
    rewriteJson: rw.json,
  });
}
