/**
 * The one representation in the middle of every translation (STYLE.md "Translation between
 * model APIs"): each wire format converts its requests, answers and streams to and from
 * these types, and never to another format directly. Adding a format touches no other
 * format's converter.
 */
export type WireFormat = 'common' | 'messages' | 'gemini';

export interface TextPart {
  type: 'text';
  text: string;
}

/** An image: a `data:` URL (base64) or an `http(s):` URL. */
export interface ImagePart {
  type: 'image';
  url: string;
  /** the common format's hint (low | high | auto): how OpenAI counts it */
  detail?: string;
}

/** A document (PDF), base64. */
export interface FilePart {
  type: 'file';
  mediaType: string;
  data: string;
  filename?: string;
}

export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  /** the arguments as JSON text */
  args: string;
  /** a provider's opaque reasoning signature that rides on the call (Gemini's thoughtSignature) */
  signature?: string;
}

export interface ToolResultPart {
  type: 'tool_result';
  id: string;
  content: (TextPart | ImagePart)[];
  isError?: boolean;
}

/** Reasoning the model showed (thinking), with the signature the provider wants back; or a redacted block. */
export interface ThinkingPart {
  type: 'thinking';
  text: string;
  signature?: string;
  redacted?: string;
}

export type Part = TextPart | ImagePart | FilePart | ToolCallPart | ToolResultPart | ThinkingPart;

export interface Turn {
  role: 'user' | 'assistant';
  parts: Part[];
}

export interface Tool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type Effort = 'none' | 'minimal' | 'low' | 'medium' | 'high';

/** What the caller asked of the model's reasoning: an effort, a token budget, "let it decide" (adaptive) or off. */
export interface Reasoning {
  effort?: Effort;
  budget?: number;
  adaptive?: boolean;
}

export type ResponseFormat = { type: 'json_object' } | { type: 'json_schema'; name?: string; schema: Record<string, unknown>; strict?: boolean };

export interface NeutralRequest {
  system: TextPart[];
  turns: Turn[];
  tools?: Tool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  stream: boolean;
  responseFormat?: ResponseFormat;
  reasoning?: Reasoning;
  user?: string;
  n?: number;
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** what the caller sent that no other format has: dropped whatever the target (names, in order) */
  dropped: string[];
  /**
   * The caller's own names for what the emitters name in the common format's words
   * (`parallel_tool_calls`, `user`, `response_format`, `reasoning_effort`, …), when the
   * caller spoke another format: a messages caller reads `disable_parallel_tool_use` in
   * X-Service-Dropped-Params, not a field it never sent.
   */
  callerNames?: Readonly<Record<string, readonly string[]>>;
}

export type StopReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'stop_sequence';

/** Token counts: `input` excludes cache reads and writes (the messages format's way). */
export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** output tokens spent reasoning, when the provider says */
  reasoning?: number;
}

export interface NeutralAnswer {
  id: string;
  model: string;
  parts: (TextPart | ToolCallPart | ThinkingPart)[];
  stop: StopReason;
  stopSequence?: string | null;
  usage: Usage;
}

/** One step of a streamed answer. Tool calls are numbered 0, 1, … in the order they start. */
export type StreamEvent =
  | { t: 'start'; id?: string; model?: string; usage?: Partial<Usage> }
  | { t: 'text'; text: string }
  | { t: 'thinking'; text: string }
  | { t: 'signature'; signature: string }
  | { t: 'redacted'; data: string }
  | { t: 'tool_start'; call: number; id: string; name: string; signature?: string }
  | { t: 'tool_args'; call: number; json: string }
  | { t: 'tool_end'; call: number }
  | { t: 'finish'; stop: StopReason; stopSequence?: string | null }
  | { t: 'usage'; usage: Partial<Usage> }
  | { t: 'error'; type: string; message: string };

export const emptyUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0 });

/**
 * reasoning_effort ⇄ a thinking budget (the messages format's `thinking.budget_tokens`,
 * Gemini's `thinkingConfig.thinkingBudget`). Anthropic's minimum budget is 1,024 tokens.
 */
export const EFFORT_BUDGET: Record<Exclude<Effort, 'none'>, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24576 };

export function effortOfBudget(budget: number): Effort {
  if (budget <= 0) return 'none';
  if (budget < 4096) return 'low';
  if (budget < 16384) return 'medium';
  return 'high';
}

/** The budget a reasoning request stands for (adaptive: undefined, the model decides). */
export function budgetOf(r: Reasoning): number | undefined {
  if (r.budget !== undefined) return r.budget;
  if (r.effort === 'none') return 0;
  return r.effort ? EFFORT_BUDGET[r.effort] : undefined;
}

/** The effort a reasoning request stands for (adaptive: undefined, the model's default). */
export function effortOf(r: Reasoning): Effort | undefined {
  if (r.effort) return r.effort;
  return r.budget !== undefined ? effortOfBudget(r.budget) : undefined;
}

export const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Adds `name` to a dropped list once. */
export function drop(list: string[], name: string): void {
  if (!list.includes(name)) list.push(name);
}

/** Adds what an emitter named (in the common format's words) to `list`, in the caller's words (never nothing). */
export function dropAsCaller(list: string[], named: readonly string[], callerNames: NeutralRequest['callerNames']): void {
  for (const n of named) {
    const own = callerNames?.[n];
    for (const c of own?.length ? own : [n]) drop(list, c);
  }
}

/** JSON text of tool arguments as an object (the messages and Gemini formats want an object). */
export function argsObject(args: string): Record<string, unknown> | undefined {
  if (args.trim() === '') return {};
  try {
    const v = JSON.parse(args) as unknown;
    return isObj(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A data: URL's media type and base64 payload. */
export function dataUrl(url: string): { mediaType: string; data: string } | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  const head = url.slice(5, comma);
  if (comma < 0 || !head.endsWith(';base64')) return undefined;
  return { mediaType: head.slice(0, -7) || 'application/octet-stream', data: url.slice(comma + 1) };
}

/** The image media type an http(s) URL's file name suggests. */
export function mediaTypeOfUrl(url: string): string {
  const m = /\.(png|jpe?g|gif|webp)(?:[?#]|$)/i.exec(url);
  const ext = m?.[1].toLowerCase();
  return ext === 'png' ? 'image/png' : ext === 'gif' ? 'image/gif' : ext === 'webp' ? 'image/webp' : 'image/jpeg';
}
