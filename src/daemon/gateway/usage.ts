import { StringDecoder } from 'node:string_decoder';
import type { ChatApi, UsageFormat } from '../../shared/providers/index.js';

/**
 * Token usage read off an upstream answer, in one shape for every format: `prompt` counts
 * every input-side token (cache reads and writes included), `cached` the part read from the
 * provider's prompt cache, `cacheWrite` the part written to it (of which `cacheWrite1h`
 * with a 1-hour life, the rest 5-minute), `completion` every output token, of which
 * `reasoning` were spent thinking.
 */
export interface TokenUsage {
  prompt: number;
  completion: number;
  cached: number;
  cacheWrite: number;
  cacheWrite1h: number;
  reasoning: number;
}

type Partial3 = { [K in keyof TokenUsage]?: number };
type Obj = Record<string, unknown>;

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' ? (v as Obj) : undefined);

/**
 * OpenAI chat (prompt/completion_tokens) and responses API (input/output_tokens). Reasoning
 * tokens are part of completion_tokens, except where total_tokens says they are not: xAI
 * reports them beside it (https://docs.x.ai/docs/guides/reasoning: prompt 32, completion 14,
 * reasoning 310, total 356), and they are output all the same.
 */
function openaiUsage(u: Obj): Partial3 {
  const details = obj(u.prompt_tokens_details) ?? obj(u.input_tokens_details);
  const out = obj(u.completion_tokens_details) ?? obj(u.output_tokens_details);
  const prompt = num(u.prompt_tokens) ?? num(u.input_tokens);
  let completion = num(u.completion_tokens) ?? num(u.output_tokens);
  const reasoning = num(out?.reasoning_tokens);
  const total = num(u.total_tokens);
  if (reasoning && completion !== undefined && prompt !== undefined && total === prompt + completion + reasoning) completion += reasoning;
  return {
    prompt,
    completion,
    // DeepSeek names its cache hits prompt_cache_hit_tokens (https://api-docs.deepseek.com/api/create-chat-completion)
    cached: num(details?.cached_tokens) ?? num(u.prompt_cache_hit_tokens),
    reasoning,
  };
}

/**
 * Anthropic: input_tokens excludes cache reads and writes. `cache_creation` breaks the writes
 * down by life (ephemeral_5m / ephemeral_1h_input_tokens); writes without it are 5-minute.
 */
function anthropicUsage(u: Obj): Partial3 {
  const input = num(u.input_tokens);
  const read = num(u.cache_read_input_tokens) ?? 0;
  const write = num(u.cache_creation_input_tokens) ?? 0;
  // without the breakdown the 1-hour part is left as it was (a stream's message_delta may
  // repeat the counts without it; a whole answer without it has none: whole() makes it 0)
  const breakdown = obj(u.cache_creation);
  const hour = breakdown ? Math.min(num(breakdown.ephemeral_1h_input_tokens) ?? 0, write) : undefined;
  if (input === undefined) return { completion: num(u.output_tokens) };
  return { prompt: input + read + write, completion: num(u.output_tokens), cached: read, cacheWrite: write, cacheWrite1h: hour };
}

/**
 * Gemini: promptTokenCount includes the cached content (cachedContentTokenCount);
 * toolUsePromptTokenCount (tool results fed back, e.g. search grounding) is input besides it;
 * thoughtsTokenCount is output besides candidatesTokenCount (https://ai.google.dev/api/generate-content#UsageMetadata).
 */
function geminiUsage(u: Obj): Partial3 {
  const out = num(u.candidatesTokenCount);
  const thoughts = num(u.thoughtsTokenCount) ?? 0;
  const prompt = num(u.promptTokenCount);
  return {
    prompt: prompt === undefined ? undefined : prompt + (num(u.toolUsePromptTokenCount) ?? 0),
    completion: out === undefined ? undefined : out + thoughts,
    cached: num(u.cachedContentTokenCount),
    reasoning: num(u.thoughtsTokenCount),
  };
}

/**
 * Bedrock Converse's TokenUsage: inputTokens excludes the cache's reads and writes, reported
 * apart; cacheDetails breaks the writes down by TTL (`5m` | `1h`,
 * https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html).
 */
function converseUsage(u: Obj): Partial3 {
  const read = num(u.cacheReadInputTokens) ?? 0;
  const write = num(u.cacheWriteInputTokens) ?? 0;
  let hour = 0;
  if (Array.isArray(u.cacheDetails)) for (const d of u.cacheDetails) if (obj(d)?.ttl === '1h') hour += num(obj(d)!.inputTokens) ?? 0;
  return { prompt: (num(u.inputTokens) ?? 0) + read + write, completion: num(u.outputTokens), cached: read, cacheWrite: write, cacheWrite1h: hour };
}

/**
 * The counts Bedrock adds to an InvokeModel stream's last chunk: inputTokenCount is, like
 * Anthropic's input_tokens, without the cache's reads and writes, which come beside it when
 * the call used the cache (a 1-hour part, if any, stays as message_start reported it).
 */
function invocationMetricsUsage(m: Obj): Partial3 {
  const input = num(m.inputTokenCount);
  const read = num(m.cacheReadInputTokenCount);
  const write = num(m.cacheWriteInputTokenCount);
  if (read === undefined && write === undefined) return { prompt: input, completion: num(m.outputTokenCount) };
  return { prompt: input === undefined ? undefined : input + (read ?? 0) + (write ?? 0), completion: num(m.outputTokenCount), cached: read ?? 0, cacheWrite: write ?? 0 };
}

function cohereUsage(b: Obj): Partial3 {
  return { prompt: num(b.input_tokens), completion: num(b.output_tokens), cached: 0 };
}

/** The usage fields of one parsed JSON document (a whole answer or one SSE event). */
export function usageOf(format: UsageFormat, doc: unknown): Partial3 | undefined {
  const d = obj(doc);
  if (!d) return undefined;
  switch (format) {
    case 'openai': {
      // chat completions, the responses API (response.usage) and Groq's x_groq.usage
      const u = obj(d.usage) ?? obj(obj(d.response)?.usage) ?? obj(obj(d.x_groq)?.usage);
      return u ? openaiUsage(u) : undefined;
    }
    case 'anthropic': {
      const u = obj(d.usage) ?? obj(obj(d.message)?.usage);
      return u ? anthropicUsage(u) : undefined;
    }
    case 'gemini': {
      const u = obj(d.usageMetadata);
      return u ? geminiUsage(u) : undefined;
    }
    case 'bedrock': {
      // Converse (its stream's metadata event too): inputTokens excludes cache reads and writes;
      // an Anthropic model's own body through InvokeModel: the messages format's usage;
      // InvokeModel streams end with amazon-bedrock-invocationMetrics
      const u = obj(d.usage);
      if (u && num(u.inputTokens) !== undefined) return converseUsage(u);
      if (u || obj(obj(d.message)?.usage)) return anthropicUsage((u ?? obj(obj(d.message)?.usage))!);
      const m = obj(d['amazon-bedrock-invocationMetrics']);
      return m ? invocationMetricsUsage(m) : undefined;
    }
    case 'vertex': {
      // Gemini's usageMetadata, or Claude's messages-format usage
      const g = obj(d.usageMetadata);
      if (g) return geminiUsage(g);
      const u = obj(d.usage) ?? obj(obj(d.message)?.usage);
      return u ? anthropicUsage(u) : undefined;
    }
    case 'cohere': {
      const b = obj(obj(d.meta)?.billed_units) ?? obj(obj(d.usage)?.billed_units) ?? obj(obj(obj(d.delta)?.usage)?.billed_units);
      if (b) return cohereUsage(b);
      // Cohere's OpenAI-compatible API (/compatibility/v1/chat/completions) answers the common usage
      const u = obj(d.usage);
      return u && u.prompt_tokens !== undefined ? openaiUsage(u) : undefined;
    }
    default:
      return undefined;
  }
}

/** Usage of a complete JSON answer, or undefined when it carries none (or is not JSON). */
export function usageFromJson(format: UsageFormat, body: Buffer): TokenUsage | undefined {
  if (format === 'units' || body.length === 0) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const u = usageOf(format, doc);
  if (!u || (u.prompt === undefined && u.completion === undefined)) return undefined;
  return whole(u, u.prompt ?? 0, u.completion ?? 0);
}

/** Usage of `prompt` input tokens and `completion` output tokens, none cached, none thinking (an estimate). */
export const plainUsage = (prompt: number, completion: number): TokenUsage => ({ prompt, completion, cached: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0 });

/** Usage with every class present and consistent: reads and writes within the prompt, reasoning within the completion. */
function whole(u: Partial3, prompt: number, completion: number): TokenUsage {
  const cached = Math.min(u.cached ?? 0, prompt);
  const cacheWrite = Math.min(u.cacheWrite ?? 0, prompt - cached);
  return {
    prompt,
    completion,
    cached,
    cacheWrite,
    cacheWrite1h: Math.min(u.cacheWrite1h ?? 0, cacheWrite),
    reasoning: Math.min(u.reasoning ?? 0, completion),
  };
}

/** Length of the first JSON string value of `key` in `line` (escapes counted as one char). */
function stringValueLength(line: string, key: string): number {
  const at = line.indexOf(key);
  if (at === -1) return 0;
  let n = 0;
  for (let i = at + key.length; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 34 /* " */) return n;
    if (c === 92 /* \ */) i++;
    n++;
  }
  return n;
}

/**
 * Where generated text sits in a chunk: content / text deltas, tool-call argument deltas, and
 * thinking shown as it is written (Anthropic's thinking_delta, DeepSeek's and xAI's
 * reasoning_content, Groq's reasoning): all of it is output.
 */
const TEXT_KEYS = ['"content":"', '"text":"', '"arguments":"', '"partial_json":"', '"thinking":"', '"reasoning_content":"', '"reasoning":"'];
/** The OpenAI format also streams the Responses API, whose text and argument deltas are `"delta":"…"`. */
const OPENAI_TEXT_KEYS = [...TEXT_KEYS, '"delta":"'];

/** A data line whose payload is an error object: OpenAI-style `{"error":…}`, Anthropic's `{"type":"error",…}`. */
const ERROR_PAYLOAD = /^data:\s*\{\s*"(?:error"\s*:|type"\s*:\s*"error")/;

/**
 * Scans an SSE byte stream as it passes through (no copy of the stream is kept: only the
 * current partial line). Lines mentioning usage are parsed; every other data line only
 * has its text delta measured, for the estimate used when the usage event never comes
 * (client disconnect, dropped stream, a caller that did not ask for usage).
 */
export class SseUsageTap {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';
  private reported: Partial3 = {};
  private final = false;
  /** characters of generated text seen in content / text deltas */
  textChars = 0;
  /** the stream carried an error event (`event: error`, a `{"error":…}` or `{"type":"error",…}` payload) */
  sawError = false;

  private readonly textKeys: readonly string[];

  constructor(private readonly format: UsageFormat) {
    this.textKeys = format === 'openai' ? OPENAI_TEXT_KEYS : TEXT_KEYS;
  }

  push(chunk: Buffer): void {
    const text = this.rest + this.decoder.write(chunk);
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      this.line(text.slice(start, nl));
      start = nl + 1;
    }
    this.rest = start === 0 ? text : text.slice(start);
    if (this.rest.length > 1 << 20) this.rest = ''; // a line over 1 MB is no usage event
  }

  end(): void {
    const tail = this.rest + this.decoder.end();
    this.rest = '';
    if (tail) this.line(tail);
  }

  private line(line: string): void {
    if (!line.startsWith('data:')) {
      if (line.startsWith('event:') && line.slice(6).trim() === 'error') this.sawError = true;
      return;
    }
    if (!this.sawError && ERROR_PAYLOAD.test(line)) this.sawError = true;
    if (line.includes('sage')) {
      // "usage", "usageMetadata"
      try {
        const u = usageOf(this.format, JSON.parse(line.slice(5)));
        if (u) {
          for (const k in u) {
            const v = u[k as keyof Partial3];
            if (v !== undefined) this.reported[k as keyof Partial3] = v;
          }
          // Anthropic's message_start carries a placeholder output count; message_delta the real one
          if (!line.includes('"message_start"')) this.final = true;
        }
      } catch {
        /* not JSON: ignore */
      }
    }
    for (const key of this.textKeys) this.textChars += stringValueLength(line, key);
  }

  /** Marks the stream as having carried an error (an AWS event stream's exception frame). */
  error(): void {
    this.sawError = true;
  }

  /**
   * True for a stream that carried an error and nothing else of worth: no usage reported and
   * no generated text. It delivered nothing: booked as failed, free.
   */
  get errorOnly(): boolean {
    return this.sawError && this.textChars === 0 && Object.keys(this.reported).length === 0;
  }

  /** True once the stream reported its final token counts. */
  get reportedFinal(): boolean {
    return this.final && this.reported.completion !== undefined;
  }

  /**
   * The usage: reported counts where the stream gave them, otherwise estimates (prompt:
   * `promptEstimate`, the hold's prompt bound; completion: ceil(text chars / 4), at least
   * `completionFloor` when the answer hides what it generates: hold.ts bookingEstimate).
   */
  usage(promptEstimate: number, completionFloor = 0): TokenUsage {
    const prompt = this.reported.prompt ?? promptEstimate;
    const completion = this.reportedFinal
      ? this.reported.completion!
      : Math.max(this.reported.completion ?? 0, Math.ceil(this.textChars / 4), completionFloor);
    return whole(this.reported, prompt, completion);
  }
}

/**
 * Prompt-size estimate of a chat body: ceil(chars / 4) + 3 per message (system included),
 * in the common, messages or Gemini format (`contents[].parts`, `systemInstruction`), plus
 * `mediaTokens` (its images, as gateway/image-tokens.ts counts them).
 */
export function estimatePromptTokens(body: unknown, mediaTokens = 0): number {
  const b = obj(body);
  if (!b) return 0;
  let n = mediaTokens;
  const add = (content: unknown) => {
    let chars = 0;
    if (typeof content === 'string') chars = content.length;
    else if (Array.isArray(content)) for (const p of content) chars += typeof obj(p)?.text === 'string' ? (obj(p)!.text as string).length : 0;
    n += Math.ceil(chars / 4) + 3;
  };
  if (b.system !== undefined) add(b.system);
  if (Array.isArray(b.messages)) for (const m of b.messages) add(obj(m)?.content);
  else if (Array.isArray(b.contents)) {
    if (b.systemInstruction !== undefined) add(obj(b.systemInstruction)?.parts);
    for (const c of b.contents) add(obj(c)?.parts);
  } else if (typeof b.prompt === 'string' || typeof b.input === 'string') add(b.prompt ?? b.input);
  return n;
}

/**
 * True when an answer of `model` may generate tokens its stream does not show, so an answer
 * ending without its usage cannot be estimated from what was streamed: a reasoning model in
 * the common format (OpenAI's o-series and GPT-5 think unseen), or a body asking for extended
 * thinking (Claude 4 shows a summary and bills the full thinking).
 */
export function hidesReasoning(api: ChatApi | undefined, model: string | null, body: unknown): boolean {
  const thinking = obj(obj(body)?.thinking);
  if (thinking && (thinking.type === 'enabled' || thinking.type === 'adaptive')) return true;
  return api?.format === 'common' && model !== null && (api.reasoningModels?.test(model) ?? false);
}
