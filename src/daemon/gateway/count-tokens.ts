import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context/index.js';
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
 * (ceil(chars / 4)).
 */
type Obj = Record<string, unknown>;

/** What the messages format's count_tokens takes (max_tokens, stream and sampling settings it refuses). */
const COUNTED = ['model', 'messages', 'system', 'tools', 'tool_choice', 'thinking', 'mcp_servers'];

export async function countTokens(ctx: AppContext, gw: Gateway, req: FastifyRequest): Promise<{ input_tokens: number }> {
  const u = gatewayUser(req);
  const body = req.body as Obj;
  const target = resolveChatModel(ctx.config, u.tier, String(body.model), keyAllowlist(ctx, u));
  const provider = ctx.config.providers.get(target.provider)!;
  const out = chatOutbound({ format: 'messages', body: { ...body, stream: false }, ...messagesExtras(req) }, { provider, model: target.model, maxOutput: maxOutputOf(ctx.config, target.provider, target.model) });
  if (out.format !== 'messages' || out.cloud) {
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
  const answer = JSON.parse((await readBody(up)).toString('utf8')) as { input_tokens?: unknown };
  return { input_tokens: typeof answer.input_tokens === 'number' ? answer.input_tokens : 0 };
}
