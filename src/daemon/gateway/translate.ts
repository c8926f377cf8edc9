/**
 * Body translation between the common chat format (OpenAI Chat Completions) and the
 * messages-style format (Anthropic Messages). Only what the unified chat endpoint promises
 * is carried over: system / user / assistant turns, max_tokens, temperature, top_p, stop,
 * stream. Provider-specific fields (tools, response_format, ...) are dropped.
 */
export interface TextPart {
  type: 'text';
  text: string;
}

export interface CommonMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** a string or text parts (checked before translation: see validate.ts) */
  content: string | TextPart[];
}

export interface CommonChatBody {
  model: string;
  messages: CommonMessage[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  stop?: string | string[];
  [k: string]: unknown;
}

/** max_tokens sent to the messages-style provider when the caller gives none (it is required there). */
export const DEFAULT_MAX_TOKENS = 4096;

/** Text parts as messages-style text blocks (only `type` and `text` carried over). */
const blocks = (parts: TextPart[]): TextPart[] => parts.map((p) => ({ type: 'text', text: p.text }));

/**
 * Common -> messages-style. System turns are joined into `system`; `tool` turns become user
 * turns (the messages format has no tool role without tool blocks); temperature is capped
 * at 1, the messages-style maximum. Text parts become text blocks, one for one (the
 * messages format has the same blocks), so nothing is joined or lost; a system turn given
 * as parts makes `system` a list of blocks.
 */
export function toMessagesBody(b: CommonChatBody, model: string): Record<string, unknown> {
  const system: (string | TextPart[])[] = [];
  const messages: { role: 'user' | 'assistant'; content: string | TextPart[] }[] = [];
  for (const m of b.messages) {
    const content = typeof m.content === 'string' ? m.content : blocks(m.content);
    if (m.role === 'system') system.push(content);
    else messages.push({ role: m.role === 'assistant' ? 'assistant' : 'user', content });
  }
  const out: Record<string, unknown> = { model, max_tokens: b.max_tokens ?? DEFAULT_MAX_TOKENS, messages };
  if (system.length) {
    out.system = system.every((c) => typeof c === 'string')
      ? system.join('\n\n')
      : system.flatMap((c) => (typeof c === 'string' ? [{ type: 'text', text: c }] : c));
  }
  if (b.temperature !== undefined) out.temperature = Math.min(b.temperature, 1);
  if (b.top_p !== undefined) out.top_p = b.top_p;
  if (b.stop !== undefined) out.stop_sequences = Array.isArray(b.stop) ? b.stop : [b.stop];
  if (b.stream) out.stream = true;
  return out;
}

/**
 * Common -> common for the common-format provider: the concrete model, and usage on
 * streams. Content given as text parts is passed as it is (it is that format's own).
 */
export function toCommonBody(b: CommonChatBody, model: string): Record<string, unknown> {
  const out: Record<string, unknown> = { ...b, model };
  if (b.stream) {
    const so = b.stream_options && typeof b.stream_options === 'object' ? (b.stream_options as Record<string, unknown>) : {};
    out.stream_options = { ...so, include_usage: true };
  }
  return out;
}

export function finishReason(stopReason: unknown): string {
  switch (stopReason) {
    case 'max_tokens':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Messages-style answer -> the spec's Chat response (common shape). */
export function toCommonResponse(body: Buffer, fallbackModel: string): Buffer {
  const m = JSON.parse(body.toString('utf8')) as {
    id?: string;
    model?: string;
    content?: { type?: string; text?: string }[];
    stop_reason?: string;
    usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number; cache_creation_input_tokens?: number };
  };
  const text = (m.content ?? []).filter((c) => c.type === 'text').map((c) => c.text ?? '').join('');
  const u = m.usage ?? {};
  const prompt = (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
  const completion = u.output_tokens ?? 0;
  return Buffer.from(
    JSON.stringify({
      id: m.id ?? 'chatcmpl-agw',
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: m.model ?? fallbackModel,
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: finishReason(m.stop_reason) }],
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
    }),
  );
}
