// Simulated OpenAI upstream: POST /v1/chat/completions (JSON + SSE), GET /v1/models,
// and 200 {ok:true,path} for any other path (generic provider endpoint).
import { writeSse } from './sse.js';
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

interface ChatMessage { role?: unknown; content?: unknown }

/** prompt_tokens the OpenAI sim reports for `messages`. */
export function openAiPromptTokens(messages: ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += countTokens(messageText(m?.content)) + PER_MESSAGE_TOKENS;
  return n;
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
  const stream = body.stream === true;
  if (ctx.drop && !stream) {
    ctx.res.destroy();
    return;
  }

  let promptTokens = 0;
  let lastUser = '';
  for (const m of messages as ChatMessage[]) {
    const text = messageText(m?.content);
    promptTokens += countTokens(text) + PER_MESSAGE_TOKENS;
    if (m?.role === 'user') lastUser = text;
  }
  let text = simReply(lastUser);
  let finish = 'stop';
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number' && max >= 0 && countTokens(text) > max) {
    text = text.slice(0, max * 4);
    finish = 'length';
  }
  const completionTokens = countTokens(text);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const id = `chatcmpl-sim${(++seq).toString(36)}`;
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
        choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finish }],
        usage,
      }),
    );
    return;
  }

  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":${created},"model":${JSON.stringify(model)},"choices":`;
  const frames: string[] = [`${head}[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n`];
  for (const piece of chunkText(text)) {
    frames.push(`${head}[{"index":0,"delta":{"content":${JSON.stringify(piece)}},"finish_reason":null}]}\n\n`);
  }
  frames.push(`${head}[{"index":0,"delta":{},"finish_reason":"${finish}"}]}\n\n`);
  const so = body.stream_options as { include_usage?: unknown } | undefined;
  if (so && typeof so === 'object' && so.include_usage === true) {
    frames.push(`${head}[],"usage":${JSON.stringify(usage)}}\n\n`);
  }
  frames.push('data: [DONE]\n\n');
  writeSse(ctx, frames);
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
