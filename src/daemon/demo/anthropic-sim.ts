// Simulated Anthropic upstream: POST /v1/messages (JSON + SSE event sequence), GET /v1/models.
// Tools as the Messages API speaks them (rule: sim-tools.ts):
// https://docs.anthropic.com/en/api/messages (`tools`, `tool_choice`, `tool_use` content, stop_reason `tool_use`),
// https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use (`tool_result` blocks,
// `tool_choice` `auto` / `any` / `tool` / `none`),
// https://docs.anthropic.com/en/docs/build-with-claude/streaming (a `tool_use` content_block_start with
// `input: {}`, then `input_json_delta` events whose `partial_json` concatenate to the input).
import { writeSse } from './sse.js';
import { argumentFragments, callText, planCall, toolSaid } from './sim-tools.js';
import type { CallPlan, SimCall, SimTool } from './sim-tools.js';
import {
  PER_MESSAGE_TOKENS,
  chunkText,
  countTokens,
  messageText,
  sendJson,
  simReply,
  startSim,
} from './sim-core.js';
import type { SimContext, SimOptions, SimUpstream } from './sim-core.js';

const anError = (type: string, message: string): string => JSON.stringify({ type: 'error', error: { type, message } });

const RATE_LIMIT_BODY = anError('rate_limit_error', 'Number of request tokens has exceeded your rate limit (simulated).');
const SERVER_ERROR_BODY = anError('api_error', 'Internal server error');
const NOT_FOUND_BODY = anError('not_found_error', 'Not found');

export const ANTHROPIC_SIM_MODELS = ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1'] as const;
const MODELS_BODY = JSON.stringify({
  data: ANTHROPIC_SIM_MODELS.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-09-29T00:00:00Z' })),
  has_more: false,
  first_id: ANTHROPIC_SIM_MODELS[0],
  last_id: ANTHROPIC_SIM_MODELS[ANTHROPIC_SIM_MODELS.length - 1],
});

interface AnthropicMessage { role?: unknown; content?: unknown }

/** input_tokens the Anthropic sim reports (a non-empty system prompt counts as one more message). */
export function anthropicInputTokens(system: unknown, messages: AnthropicMessage[]): number {
  const sys = messageText(system);
  let n = sys.length > 0 ? countTokens(sys) + PER_MESSAGE_TOKENS : 0;
  for (const m of messages) n += countTokens(messageText(m?.content)) + PER_MESSAGE_TOKENS;
  return n;
}

/** The texts of the `tool_result` blocks of the last turn (undefined: it carries none). */
function toolResults(messages: AnthropicMessage[]): string[] | undefined {
  const last = messages.at(-1);
  if (last?.role !== 'user' || !Array.isArray(last.content)) return undefined;
  const out: string[] = [];
  for (const b of last.content as { type?: unknown; content?: unknown }[]) if (b?.type === 'tool_result') out.push(messageText(b.content));
  return out.length > 0 ? out : undefined;
}

/**
 * The call to make, if any (rule: sim-tools.ts): client tools present (`{name, input_schema}`,
 * `type` absent or `custom`; server tools such as `web_search_20250305` are not the sim's to
 * call) and `tool_choice` not `none`; `{type: 'tool', name}` names the one called, `any`
 * requires a call.
 */
function toolPlan(body: Record<string, unknown>, userText: string): CallPlan | undefined {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
  const tools: SimTool[] = [];
  for (const t of body.tools as { type?: unknown; name?: unknown; input_schema?: unknown }[]) {
    if ((t?.type === undefined || t.type === 'custom') && typeof t?.name === 'string') tools.push({ name: t.name, schema: t.input_schema });
  }
  const choice = body.tool_choice as { type?: unknown; name?: unknown } | undefined;
  if (tools.length === 0 || choice?.type === 'none') return undefined;
  const name = choice?.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
  return planCall(tools, { name, required: choice?.type === 'any' }, userText);
}

let seq = 0;

const badRequest = (ctx: SimContext, message: string): void =>
  sendJson(ctx.res, 400, anError('invalid_request_error', message));

function frame(event: string, data: string): string {
  return `event: ${event}\ndata: ${data}\n\n`;
}

/**
 * Anthropic's answer for a model it does not have: HTTP 404 `not_found_error`
 * (https://docs.anthropic.com/en/api/errors).
 */
const unknownModel = (model: string): string => anError('not_found_error', `model: ${model}`);

function messages(ctx: SimContext, knownModels?: (model: string) => boolean): void {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(ctx.body) as Record<string, unknown>;
  } catch {
    return badRequest(ctx, 'There was an issue with your request body: invalid JSON.');
  }
  if (!body || typeof body !== 'object') return badRequest(ctx, 'Request body must be a JSON object.');
  const model = body.model;
  const msgs = body.messages;
  if (typeof model !== 'string' || model === '') return badRequest(ctx, 'model: Field required');
  if (!Array.isArray(msgs)) return badRequest(ctx, 'messages: Field required');
  if (knownModels && !knownModels(model)) return sendJson(ctx.res, 404, unknownModel(model));
  if (typeof body.max_tokens !== 'number') return badRequest(ctx, 'max_tokens: Field required');
  const maxTokens = body.max_tokens;
  let lastUser = '';
  for (const m of msgs as AnthropicMessage[]) {
    if (m?.role !== 'user' && m?.role !== 'assistant') {
      return badRequest(ctx, "messages: roles must be 'user' or 'assistant'");
    }
    if (m.role === 'user') lastUser = messageText(m.content);
  }
  const results = toolResults(msgs as AnthropicMessage[]);
  const plan = results ? undefined : toolPlan(body, lastUser);
  if (plan && 'error' in plan) return badRequest(ctx, `tool_choice: ${plan.error}`);
  const call: SimCall | undefined = plan?.call;
  const stream = body.stream === true;
  if (ctx.drop && !stream) {
    ctx.res.destroy();
    return;
  }

  const inputTokens = anthropicInputTokens(body.system, msgs as AnthropicMessage[]);
  let text = results ? toolSaid(results) : simReply(lastUser);
  let stopReason = 'end_turn';
  let stopSequence: string | null = null;
  if (call) {
    // a call comes whole (the sim never cuts one off at max_tokens or a stop sequence)
    text = '';
    stopReason = 'tool_use';
  } else if (Array.isArray(body.stop_sequences)) {
    let at = -1;
    for (const s of body.stop_sequences) {
      if (typeof s !== 'string' || s === '') continue;
      const i = text.indexOf(s);
      if (i !== -1 && (at === -1 || i < at)) {
        at = i;
        stopSequence = s;
      }
    }
    if (at !== -1) {
      text = text.slice(0, at);
      stopReason = 'stop_sequence';
    }
  }
  if (!call && countTokens(text) > maxTokens) {
    text = text.slice(0, Math.max(0, maxTokens) * 4);
    stopReason = 'max_tokens';
    stopSequence = null;
  }
  const outputTokens = countTokens(call ? callText(call) : text);
  const n = (++seq).toString(36);
  const id = `msg_sim${n}`;
  const toolUse = call ? { type: 'tool_use', id: `toolu_sim${n}`, name: call.name, input: JSON.parse(call.arguments) as unknown } : undefined;

  if (!stream) {
    sendJson(
      ctx.res,
      200,
      JSON.stringify({
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [toolUse ?? { type: 'text', text }],
        stop_reason: stopReason,
        stop_sequence: stopSequence,
        usage: { input_tokens: inputTokens, output_tokens: outputTokens },
      }),
    );
    return;
  }

  const frames: string[] = [
    frame(
      'message_start',
      `{"type":"message_start","message":{"id":"${id}","type":"message","role":"assistant","model":${JSON.stringify(model)},"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":${inputTokens},"output_tokens":1}}}`,
    ),
    frame(
      'content_block_start',
      `{"type":"content_block_start","index":0,"content_block":${toolUse ? JSON.stringify({ ...toolUse, input: {} }) : '{"type":"text","text":""}'}}`,
    ),
    frame('ping', '{"type":"ping"}'),
  ];
  if (call) {
    // as the streaming guide shows it: an empty fragment first, then the input in pieces
    for (const piece of ['', ...argumentFragments(call.arguments)]) {
      frames.push(
        frame('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(piece)}}}`),
      );
    }
  } else {
    for (const piece of chunkText(text)) {
      frames.push(
        frame('content_block_delta', `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":${JSON.stringify(piece)}}}`),
      );
    }
  }
  frames.push(
    frame('content_block_stop', '{"type":"content_block_stop","index":0}'),
    frame(
      'message_delta',
      `{"type":"message_delta","delta":{"stop_reason":"${stopReason}","stop_sequence":${JSON.stringify(stopSequence)}},"usage":{"output_tokens":${outputTokens}}}`,
    ),
    frame('message_stop', '{"type":"message_stop"}'),
  );
  writeSse(ctx, frames);
}

export function startAnthropicSim(opts: SimOptions = {}): Promise<SimUpstream> {
  const apiKey = opts.apiKey;
  return startSim(
    {
      rateLimitBody: RATE_LIMIT_BODY,
      serverErrorBody: SERVER_ERROR_BODY,
      handle(ctx) {
        const key = ctx.req.headers['x-api-key'];
        if (typeof key !== 'string' || key === '' || (apiKey !== undefined && key !== apiKey)) {
          return sendJson(ctx.res, 401, anError('authentication_error', 'invalid x-api-key'));
        }
        if (!ctx.req.headers['anthropic-version']) {
          return badRequest(ctx, 'anthropic-version: header is required');
        }
        const { method, path } = ctx;
        if (method === 'POST' && path === '/v1/messages') return messages(ctx, opts.knownModels);
        if (ctx.drop) {
          ctx.res.destroy();
          return;
        }
        if (method === 'GET' && path === '/v1/models') return sendJson(ctx.res, 200, MODELS_BODY);
        sendJson(ctx.res, 404, NOT_FOUND_BODY);
      },
    },
    opts,
  );
}
