/**
 * The two chat stream formats the gateway passes through: OpenAI-style chunks
 * (`choices[0].delta.content`, usage on the last chunk) and Anthropic-style events
 * (`content_block_delta` → `delta.text`, usage in `message_start` / `message_delta`).
 */

import { sseEvents } from '../sse.js';

export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
}

/** Server-sent events of a response body: each event's `data`; ends at `[DONE]`. */
export async function* sseData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  for await (const e of sseEvents(body)) {
    if (e.data === '[DONE]') return;
    if (e.data) yield e.data;
  }
}

type J = Record<string, unknown>;
const obj = (v: unknown): J => (v && typeof v === 'object' ? (v as J) : {});
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const num = (v: unknown) => (typeof v === 'number' ? v : undefined);

/** The text and usage one event carries; `error` when the stream reports a failure. */
export function readEvent(data: string): { text?: string; usage?: Usage; error?: string } {
  let e: J;
  try {
    e = obj(JSON.parse(data));
  } catch {
    return {};
  }
  if (e.type === 'error' || (e.error !== undefined && !Array.isArray(e.choices))) {
    return { error: str(obj(e.error).message) ?? str(e.error) ?? 'stream error' };
  }
  if (Array.isArray(e.choices)) {
    const u = obj(e.usage);
    const usage = e.usage ? { prompt_tokens: num(u.prompt_tokens), completion_tokens: num(u.completion_tokens) } : undefined;
    return { text: str(obj(obj(e.choices[0]).delta).content), usage };
  }
  if (e.type === 'content_block_delta') return { text: str(obj(e.delta).text) };
  if (e.type === 'message_start') return { usage: { prompt_tokens: num(obj(obj(e.message).usage).input_tokens) } };
  if (e.type === 'message_delta') return { usage: { completion_tokens: num(obj(e.usage).output_tokens) } };
  return {};
}

/** The answer text of a non-streamed reply in either shape. */
export function replyText(body: unknown): string {
  const b = obj(body);
  if (Array.isArray(b.choices)) return str(obj(obj(b.choices[0]).message).content) ?? '';
  if (Array.isArray(b.content)) return b.content.map(obj).filter((x) => x.type === 'text').map((x) => str(x.text) ?? '').join('');
  return '';
}
