/** `agw chat "prompt"`: one turn through POST /gateway/chat, streamed or not. */
import { Api } from '../api.js';
import type { GlobalOpts } from '../auth.js';
import { CliError, UsageError } from '../errors.js';
import { usd } from '../format.js';
import { dim, isTty, printJson } from '../output.js';
import { readStdin } from '../prompt.js';
import { readEvent, replyText, sseData, type Usage } from './chat-sse.js';

interface ChatOpts extends GlobalOpts {
  model: string;
  system?: string;
  stream?: boolean;
  maxTokens?: string;
  temperature?: string;
}

const CHAT_TIMEOUT_MS = 10 * 60_000;

/**
 * The output cap `agw chat` asks for unless told otherwise: enough for a terminal answer,
 * and a call is held (and admitted) for its cap, so "hi" need not hold the model's whole
 * output limit (32k tokens or more). `--max-tokens max` sends none: the model's own limit.
 */
export const DEFAULT_CHAT_MAX_TOKENS = 1024;

function buildBody(prompt: string, o: ChatOpts): Record<string, unknown> {
  const messages = [...(o.system ? [{ role: 'system', content: o.system }] : []), { role: 'user', content: prompt }];
  const body: Record<string, unknown> = { model: o.model, messages, stream: Boolean(o.stream) };
  if (o.maxTokens === undefined) body.max_tokens = DEFAULT_CHAT_MAX_TOKENS;
  else if (o.maxTokens !== 'max') {
    const n = Number(o.maxTokens);
    if (!Number.isInteger(n) || n < 1) throw new UsageError('--max-tokens must be an integer of at least 1, or max (the model’s own limit)');
    body.max_tokens = n;
  }
  if (o.temperature !== undefined) {
    const t = Number(o.temperature);
    if (!Number.isFinite(t) || t < 0 || t > 2) throw new UsageError('--temperature must be a number from 0 to 2');
    body.temperature = t;
  }
  return body;
}

export async function chat(promptArg: string | undefined, opts: ChatOpts): Promise<void> {
  let prompt = promptArg;
  if (prompt === undefined || prompt === '-') {
    if (process.stdin.isTTY) throw new UsageError('give a prompt', 'agw chat "Say hello", or pipe it: echo hi | agw chat');
    prompt = (await readStdin()).trim();
  }
  if (!prompt) throw new UsageError('the prompt is empty');
  const body = buildBody(prompt, opts);
  const api = await Api.open(opts);
  const res = await api.send('POST', '/gateway/chat', { auth: 'bearer', json: body, timeoutMs: CHAT_TIMEOUT_MS }).catch((e: unknown) => {
    throw fundsHint(e, body.max_tokens as number | undefined);
  });
  const requestId = res.headers.get('x-request-id');
  const provider = res.headers.get('x-service-resolved-provider');
  const model = res.headers.get('x-service-resolved-model');
  const viaAlias = res.headers.get('x-service-resolved-via-alias') === '1';

  if (!opts.stream) {
    const answer = (await res.json()) as Record<string, unknown>;
    if (opts.json) return printJson(answer);
    process.stdout.write(replyText(answer) + '\n');
  } else {
    let content = '';
    const usage: Usage = {};
    try {
      for await (const data of sseData(res.body!)) {
        const ev = readEvent(data);
        if (ev.error) throw new CliError(`the upstream failed mid-stream: ${ev.error}`, 'retry, or pick another model with --model', 'STREAM_ERROR');
        if (ev.usage) for (const [k, v] of Object.entries(ev.usage)) if (typeof v === 'number') usage[k as keyof Usage] = v;
        if (ev.text) {
          content += ev.text;
          if (!opts.json) process.stdout.write(ev.text);
        }
      }
    } catch (e) {
      if (e instanceof CliError) throw e;
      if (!opts.json && content) process.stdout.write('\n');
      throw new CliError(`the stream broke off: ${(e as Error).message}`, 'retry the request', 'STREAM_ERROR');
    }
    if (opts.json) return printJson({ provider, model, viaAlias, content, usage, requestId, cost: (await recordOf(api, requestId))?.cost ?? null });
    process.stdout.write('\n');
  }
  if (isTty() && !opts.json) {
    const cost = (await recordOf(api, requestId))?.cost;
    process.stdout.write(dim(`${provider}/${model}${cost === undefined ? '' : ` · ${usd(cost)}`}${requestId ? ` · ${requestId}` : ''}`) + '\n');
  }
}

/**
 * A 402 for this call's hold when a shorter answer would fit: name `--max-tokens` (the
 * wallet covers about N output tokens) besides topping up.
 */
function fundsHint(e: unknown, asked: number | undefined): unknown {
  if (!(e instanceof CliError) || e.code !== 'INSUFFICIENT_FUNDS') return e;
  const d = (e as CliError & { details?: { maxAffordableTokens?: unknown } }).details ?? {};
  const fits = typeof d.maxAffordableTokens === 'number' ? Math.floor(d.maxAffordableTokens) : 0;
  if (fits < 1) return e;
  const cap = asked === undefined ? 'the model’s own output limit' : `${asked} output tokens`;
  const hint = `ask for a shorter answer: --max-tokens ${fits} (the wallet covers about ${fits} output tokens; this call asked for ${cap}), or top up: agw wallet topup AMOUNT`;
  return Object.assign(new CliError(e.message, hint, e.code), { details: d });
}

/**
 * The call's record in the request log (its answer's x-request-id): what it really cost.
 * Undefined when it cannot be read (an older daemon, a network blip): the cost is then not
 * shown.
 */
async function recordOf(api: Api, requestId: string | null): Promise<{ cost: number } | undefined> {
  if (!requestId) return undefined;
  // a stream's last event can reach us a moment before the daemon has booked the call
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await api.get<{ cost: number }>(`/requests/${encodeURIComponent(requestId)}`, { auth: 'bearer', timeoutMs: 3000 });
    } catch (e) {
      if ((e as CliError).code !== 'REQUEST_NOT_FOUND') return undefined;
      await new Promise((r) => setTimeout(r, 50 * (attempt + 1)));
    }
  }
  return undefined;
}
