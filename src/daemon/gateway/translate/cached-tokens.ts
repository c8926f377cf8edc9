import { isObj, num } from './neutral.js';
import { SseReader, type SseEvent } from './sse.js';

/**
 * A common-format answer from a provider that counts cache hits under its own name
 * (DeepSeek's `prompt_cache_hit_tokens`, https://api-docs.deepseek.com/api/create-chat-completion),
 * restated where the common shape has them, `usage.prompt_tokens_details.cached_tokens`
 * (https://platform.openai.com/docs/api-reference/chat/object), for a caller who asked for
 * the common shape: the OpenAI SDK, LangChain and the AI SDK read them there. The
 * provider's own fields stay and nothing else changes; an answer without the field passes
 * as it came (JSON: the same bytes).
 */
type Obj = Record<string, unknown>;

function restate(o: Obj, field: string): boolean {
  const u = o.usage;
  if (!isObj(u)) return false;
  const hits = num(u[field]);
  const details = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  if (hits === undefined || num(details.cached_tokens) !== undefined) return false;
  u.prompt_tokens_details = { ...details, cached_tokens: hits };
  return true;
}

/** A whole JSON answer with its cache hits restated (the same buffer when there is nothing to restate). */
export function cachedTokensJson(field: string): (body: Buffer) => Buffer {
  return (body) => {
    if (!body.includes(field)) return body;
    const o = JSON.parse(body.toString('utf8')) as Obj;
    return restate(o, field) ? Buffer.from(JSON.stringify(o)) : body;
  };
}

/** A common stream with its usage chunk's cache hits restated; every other event is passed on as it came. */
export class CachedTokensStream {
  private readonly reader = new SseReader();

  constructor(private readonly field: string) {}

  private run(events: SseEvent[]): string {
    let out = '';
    for (const e of events) {
      let data = e.data;
      if (data.includes(this.field)) {
        try {
          const o = JSON.parse(data) as Obj;
          if (restate(o, this.field)) data = JSON.stringify(o);
        } catch {
          /* not JSON: passed on as it came */
        }
      }
      out += `${e.event ? `event: ${e.event}\n` : ''}${data
        .split('\n')
        .map((l) => `data: ${l}\n`)
        .join('')}\n`;
    }
    return out;
  }

  push(chunk: Buffer): string {
    return this.run(this.reader.push(chunk));
  }

  end(): string {
    return this.run(this.reader.end());
  }
}
