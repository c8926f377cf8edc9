import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import type { UserPrincipal } from '../context/principal.js';
import type { AppContext } from '../context/index.js';
import { moneyOf } from '../money/index.js';
import { Buckets } from '../money/sqlite/buckets.js';
import { gatewayUser } from './auth.js';
import { maxOutputOf, messagesExtras, upstreamRefusal } from './chat-call.js';
import { countImages } from './image-tokens.js';
import { keyAllowlist } from './key-refusal.js';
import { readBody, unreachable, upstreamMessage } from './relay.js';
import { readErrorBody } from './redact.js';
import { resolveChatModel } from './resolve.js';
import type { Gateway } from './runtime.js';
import { chatOutbound } from './cloud-chat.js';
import { providerAuthHeaders } from './upstream.js';
import { estimatePromptTokens } from './usage.js';

/**
 * POST /gateway/v1/messages/count_tokens: the input tokens of a Messages body at the
 * provider its model resolves to, free and unmetered (no quota unit, no hold, no record).
 * A messages-format provider is asked (its own count_tokens); for any other (a cloud's
 * Claude too) the count is the gateway's estimate of the body as that provider would get
 * it: ceil(chars / 4) + 3 a message, images by their pixels, tool definitions by their JSON
 * (ceil(chars / 4)). A key with a rate limit asks the provider at most its rpm a minute on
 * this daemon (the operator's count_tokens rate is the provider account's), and none while
 * its own request window is empty: past that it gets the estimate. A 2xx that is not a
 * count is 503 UPSTREAM_UNREACHABLE.
 */
type Obj = Record<string, unknown>;

/** What the messages format's count_tokens takes (max_tokens, stream and sampling settings it refuses). */
const COUNTED = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers'];

/** Per daemon: the provider count_tokens calls of each key with an rpm (a token bucket of that rpm). */
const asked = new WeakMap<Gateway, Buckets>();

/** Whether this call may ask the provider: always, but for a key with an rpm past it (or with its own window empty). */
async function mayAskProvider(ctx: AppContext, gw: Gateway, u: UserPrincipal): Promise<boolean> {
  if (u.kind !== 'key' || !u.limits || u.limits.rpm === null) return true;
  const rpm = u.limits.rpm;
  const now = Date.now();
  const own = (await moneyOf(ctx)).rateOf({ id: u.keyId, limits: u.limits, period: null }, now).requests;
  if (own && own.remaining <= 0) return false;
  let b = asked.get(gw);
  if (!b) asked.set(gw, (b = new Buckets()));
  if (!b.has(u.keyId, rpm, 1, now)) return false;
  b.take(u.keyId, rpm, 1, now);
  return true;
}

/** The provider's count, or 503 UPSTREAM_UNREACHABLE for a 2xx that is not one. */
function countOf(provider: string, body: Buffer): number {
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    throw new AgwError('UPSTREAM_UNREACHABLE', `upstream ${provider} answered count_tokens with something that is not JSON`);
  }
  const n = (answer as { input_tokens?: unknown } | null)?.input_tokens;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) throw new AgwError('UPSTREAM_UNREACHABLE', `upstream ${provider} answered count_tokens without input_tokens`);
  return n;
}

export async function countTokens(ctx: AppContext, gw: Gateway, req: FastifyRequest): Promise<{ input_tokens: number }> {
  const u = gatewayUser(req);
  const body = req.body as Obj;
  const target = resolveChatModel(ctx.config, u.tier, String(body.model), keyAllowlist(ctx, u));
  const provider = ctx.config.providers.get(target.provider)!;
  const out = chatOutbound({ format: 'messages', body: { ...body, stream: false }, ...messagesExtras(req) }, { provider, model: target.model, maxOutput: maxOutputOf(ctx.config, target.provider, target.model) });
  if (out.format !== 'messages' || out.cloud || !(await mayAskProvider(ctx, gw, u))) {
    const images = countImages(out.format, out.body, out.text, target.provider, target.model);
    const tools = out.body.tools === undefined ? 0 : Math.ceil(JSON.stringify(out.body.tools).length / 4);
    return { input_tokens: estimatePromptTokens(out.body, images?.tokens) + tools };
  }
  const counted = Object.fromEntries(COUNTED.filter((k) => out.body[k] !== undefined).map((k) => [k, out.body[k]]));
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...out.headers };
  providerAuthHeaders(provider, headers);
  let up;
  try {
    up = await gw.upstreams.request(provider, { method: 'POST', path: `${out.path}/count_tokens`, query: out.query, headers, body: JSON.stringify(counted) });
  } catch (err) {
    throw unreachable(target.provider, err);
  }
  if (up.statusCode < 200 || up.statusCode >= 300) {
    const { body: text } = await readErrorBody(up, gw.redact);
    throw upstreamRefusal(target.provider, up.statusCode, upstreamMessage(text, gw.redact), undefined);
  }
  let text: Buffer;
  try {
    text = await readBody(up);
  } catch (err) {
    throw unreachable(target.provider, err);
  }
  return { input_tokens: countOf(target.provider, text) };
}
