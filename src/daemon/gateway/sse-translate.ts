import { StringDecoder } from 'node:string_decoder';
import { finishReason } from './translate.js';

interface MessagesUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

interface MessagesEvent {
  type?: string;
  message?: { id?: string; model?: string; usage?: MessagesUsage };
  delta?: { type?: string; text?: string; stop_reason?: string };
  usage?: MessagesUsage;
  error?: { message?: string; type?: string };
}

/**
 * Rewrites a messages-style event stream (message_start, content_block_delta,
 * message_delta, message_stop) into common-format chunks (`chat.completion.chunk` data
 * lines ending with `data: [DONE]`), event by event as bytes arrive. Used by the smart
 * route, whose answers are always in the common shape.
 */
export class MessagesToCommonSse {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';
  private data: string[] = [];
  private id = 'chatcmpl-agw';
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private prompt = 0;
  private completion = 0;
  private done = false;

  constructor(
    fallbackModel: string,
    private readonly includeUsage: boolean,
  ) {
    this.model = fallbackModel;
  }

  push(chunk: Buffer): string {
    const text = this.rest + this.decoder.write(chunk);
    let out = '';
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      out += this.line(text.slice(start, nl).replace(/\r$/, ''));
      start = nl + 1;
    }
    this.rest = text.slice(start);
    return out;
  }

  end(): string {
    let out = this.push(Buffer.alloc(0));
    if (this.rest) out += this.line(this.rest);
    out += this.line('');
    if (!this.done) out += this.finish();
    return out;
  }

  private line(line: string): string {
    if (line === '') {
      if (!this.data.length) return '';
      const payload = this.data.join('\n');
      this.data = [];
      return this.event(payload);
    }
    if (line.startsWith('data:')) this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    return '';
  }

  private chunk(delta: Record<string, unknown>, finish: string | null): string {
    return `data: ${JSON.stringify({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  }

  private finish(): string {
    this.done = true;
    let out = '';
    if (this.includeUsage) {
      const usage = { prompt_tokens: this.prompt, completion_tokens: this.completion, total_tokens: this.prompt + this.completion };
      out += `data: ${JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage })}\n\n`;
    }
    return `${out}data: [DONE]\n\n`;
  }

  private event(payload: string): string {
    let e: MessagesEvent;
    try {
      e = JSON.parse(payload) as MessagesEvent;
    } catch {
      return '';
    }
    switch (e.type) {
      case 'message_start': {
        const m = e.message ?? {};
        if (typeof m.id === 'string') this.id = m.id;
        if (typeof m.model === 'string') this.model = m.model;
        const u = m.usage ?? {};
        this.prompt = (u.input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0);
        return this.chunk({ role: 'assistant', content: '' }, null);
      }
      case 'content_block_delta':
        return e.delta?.type === 'text_delta' ? this.chunk({ content: e.delta.text ?? '' }, null) : '';
      case 'message_delta':
        if (typeof e.usage?.output_tokens === 'number') this.completion = e.usage.output_tokens;
        return this.chunk({}, finishReason(e.delta?.stop_reason));
      case 'message_stop':
        return this.done ? '' : this.finish();
      case 'error':
        this.done = true;
        return `data: ${JSON.stringify({ error: { message: String(e.error?.message ?? 'upstream error'), type: String(e.error?.type ?? 'api_error') } })}\n\n`;
      default:
        return '';
    }
  }
}
