// Simulated OpenAI upstream: POST /v1/chat/completions (JSON + SSE), GET /v1/models,
// and 200 {ok:true,path} for any other path (generic provider endpoint).
// Tools as the Chat Completions API speaks them (rule: sim-tools.ts):
// https://platform.openai.com/docs/api-reference/chat/create (`tools`, `tool_choice`, `tool` messages),
// https://platform.openai.com/docs/api-reference/chat/object (`message.tool_calls`, finish_reason `tool_calls`),
// https://platform.openai.com/docs/api-reference/chat-streaming/streaming and
// https://platform.openai.com/docs/guides/function-calling#streaming (`delta.tool_calls` keyed by `index`:
// the first with `id`, `type` and `function.name`, then the `function.arguments` fragments).
import { writeSse } from './sse.js';
import { argumentFragments, callText, planCall, toolSaid } from './sim-tools.js';
import type { CallPlan, SimCall, SimTool, SimToolChoice } from './sim-tools.js';
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

const oaError = (message: string, type: string, code: string | null): string =>
  JSON.stringify({ error: { message, type, code } });

const RATE_LIMIT_BODY = oaError('Rate limit reached for requests (simulated).', 'requests', 'rate_limit_exceeded');
const SERVER_ERROR_BODY = oaError('The server had an error while processing your request.', 'server_error', null);
const BAD_KEY_BODY = oaError('Incorrect API key provided.', 'invalid_request_error', 'invalid_api_key');

export const OPENAI_SIM_MODELS = ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini', 'gpt-4.1'] as const;
const MODELS_BODY = JSON.stringify({
  object: 'list',
  data: OPENAI_SIM_MODELS.map((id) => ({ id, object: 'model', created: 1_715_367_049, owned_by: 'system' })),
});

interface ChatMessage { role?: unknown; content?: unknown; tool_calls?: unknown }

/** A turn's text for token counts: its content and, on an assistant turn, its calls (name + arguments). */
function turnText(m: ChatMessage | undefined): string {
  let text = messageText(m?.content);
  if (Array.isArray(m?.tool_calls)) {
    for (const c of m.tool_calls as { function?: { name?: unknown; arguments?: unknown } }[]) {
      if (c?.function) text += String(c.function.name ?? '') + String(c.function.arguments ?? '');
    }
  }
  return text;
}

/** prompt_tokens the OpenAI sim reports for `messages`. */
export function openAiPromptTokens(messages: ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += countTokens(turnText(m)) + PER_MESSAGE_TOKENS;
  return n;
}

/** The contents of the `tool` messages the request ends with (undefined: it ends otherwise). */
function toolResults(messages: ChatMessage[]): string[] | undefined {
  let i = messages.length;
  while (i > 0 && messages[i - 1]?.role === 'tool') i--;
  return i < messages.length ? messages.slice(i).map((m) => messageText(m.content)) : undefined;
}

/**
 * The call to make, if any (rule: sim-tools.ts): function tools present (`{type: 'function',
 * function: {name, parameters}}`) and `tool_choice` not `none`; a named function
 * (`{type: 'function', function: {name}}`) is the one called, `required` requires a call,
 * `allowed_tools` narrows the list (its `mode: required` requires a call).
 */
function toolPlan(body: Record<string, unknown>, userText: string): CallPlan | undefined {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return undefined;
  let tools: SimTool[] = [];
  for (const t of body.tools as { type?: unknown; function?: { name?: unknown; parameters?: unknown } }[]) {
    if (t?.type === 'function' && typeof t.function?.name === 'string') tools.push({ name: t.function.name, schema: t.function.parameters });
  }
  const choice = body.tool_choice as { type?: unknown; function?: { name?: unknown }; allowed_tools?: { mode?: unknown; tools?: unknown } } | string | undefined;
  if (tools.length === 0 || choice === 'none') return undefined;
  const asked: SimToolChoice = { required: choice === 'required' };
  if (typeof choice === 'object' && choice !== null) {
    if (choice.type === 'function' && typeof choice.function?.name === 'string') asked.name = choice.function.name;
    if (choice.type === 'allowed_tools' && Array.isArray(choice.allowed_tools?.tools)) {
      const allowed = new Set((choice.allowed_tools.tools as { function?: { name?: unknown } }[]).map((a) => a?.function?.name));
      tools = tools.filter((t) => allowed.has(t.name));
      if (tools.length === 0) return { error: 'tool_choice.allowed_tools names no tool that is in tools' };
      asked.required = choice.allowed_tools.mode === 'required';
    }
  }
  return planCall(tools, asked, userText);
}

let seq = 0;

function badRequest(ctx: SimContext, message: string): void {
  sendJson(ctx.res, 400, oaError(message, 'invalid_request_error', null));
}

/**
 * OpenAI's answer for a model that does not exist (HTTP 404, code `model_not_found`):
 * https://platform.openai.com/docs/guides/error-codes (404 "model not found").
 */
const unknownModel = (model: string): string =>
  oaError(`The model \`${model}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found');

function chat(ctx: SimContext, knownModels?: (model: string) => boolean): void {
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(ctx.body) as Record<string, unknown>;
  } catch {
    return badRequest(ctx, 'We could not parse the JSON body of your request.');
  }
  if (!body || typeof body !== 'object') return badRequest(ctx, 'Request body must be a JSON object.');
  const model = body.model;
  const messages = body.messages;
  if (typeof model !== 'string' || model === '') return badRequest(ctx, "Missing required parameter: 'model'.");
  if (!Array.isArray(messages)) return badRequest(ctx, "Missing required parameter: 'messages'.");
  if (knownModels && !knownModels(model)) return sendJson(ctx.res, 404, unknownModel(model));
  let promptTokens = 0;
  let lastUser = '';
  for (const m of messages as ChatMessage[]) {
    promptTokens += countTokens(turnText(m)) + PER_MESSAGE_TOKENS;
    if (m?.role === 'user') lastUser = messageText(m.content);
  }
  const results = toolResults(messages as ChatMessage[]);
  const plan = results ? undefined : toolPlan(body, lastUser);
  if (plan && 'error' in plan) return badRequest(ctx, plan.error);
  const stream = body.stream === true;
  if (ctx.drop && !stream) {
    ctx.res.destroy();
    return;
  }

  const call: SimCall | undefined = plan?.call;
  let text = results ? toolSaid(results) : simReply(lastUser);
  let finish = 'stop';
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (call) {
    // a call comes whole (the sim never cuts one off at max_tokens)
    text = '';
    finish = 'tool_calls';
  } else if (typeof max === 'number' && max >= 0 && countTokens(text) > max) {
    text = text.slice(0, max * 4);
    finish = 'length';
  }
  const completionTokens = countTokens(call ? callText(call) : text);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const n = (++seq).toString(36);
  const id = `chatcmpl-sim${n}`;
  const callId = `call_sim${n}`;
  const created = Math.floor(Date.now() / 1000);

  if (!stream) {
    sendJson(
      ctx.res,
      200,
      JSON.stringify({
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [{ index: 0, message: call ? callMessage(callId, call) : { role: 'assistant', content: text }, finish_reason: finish }],
        usage,
      }),
    );
    return;
  }

  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":`;
  const frames: string[] = [];
  if (call) {
    const start = { index: 0, id: callId, type: 'function', function: { name: call.name, arguments: '' } };
    frames.push(`${head}[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[${JSON.stringify(start)}]},"finish_reason":null}]}\n\n`);
    for (const piece of argumentFragments(call.arguments)) {
      frames.push(`${head}[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":${JSON.stringify(piece)}}}]},"finish_reason":null}]}\n\n`);
    }
  } else {
    frames.push(`${head}[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`);
    for (const piece of chunkText(text)) {
      frames.push(`${head}[{"index":0,"delta":{"content":${JSON.stringify(piece)}},"finish_reason":null}]}\n\n`);
    }
  }
  frames.push(`${head}[{"index":0,"delta":{},"finish_reason":"${finish}"}]}\n\n`);
  const so = body.stream_options as { include_usage?: unknown } | undefined;
  if (so && typeof so === 'object' && so.include_usage === true) {
    frames.push(`${head}[],"usage":${JSON.stringify(usage)}}\n\n`);
  }
  frames.push('data: [DONE]\n\n');
  writeSse(ctx, frames);
}

/** The assistant message of a call: `content: null` and one `tool_calls` entry. */
function callMessage(id: string, call: SimCall) {
  return { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: call.name, arguments: call.arguments } }] };
}

export function startOpenAiSim(opts: SimOptions = {}): Promise<SimUpstream> {
  const expectedAuth = opts.apiKey !== undefined ? `Bearer ${opts.apiKey}` : undefined;
  let answered = 0;
  return startSim(
    {
      rateLimitBody: RATE_LIMIT_BODY,
      serverErrorBody: SERVER_ERROR_BODY,
      handle(ctx) {
        // as OpenAI answers: its own request id and the account's rate windows on every answer
        ctx.res.setHeader('x-request-id', `req_sim_${++answered}`);
        ctx.res.setHeader('x-ratelimit-limit-requests', '10000');
        ctx.res.setHeader('x-ratelimit-remaining-requests', '9999');
        ctx.res.setHeader('x-ratelimit-reset-requests', '6ms');
        if (expectedAuth !== undefined && ctx.req.headers.authorization !== expectedAuth) {
          return sendJson(ctx.res, 401, BAD_KEY_BODY);
        }
        const { method, path } = ctx;
        if (method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions')) return chat(ctx, opts.knownModels);
        if (ctx.drop) {
          ctx.res.destroy();
          return;
        }
        if (method === 'GET' && (path === '/v1/models' || path === '/models')) return sendJson(ctx.res, 200, MODELS_BODY);
        sendJson(ctx.res, 200, JSON.stringify({ ok: true, path }));
      },
    },
    opts,
  );
}
