import { commonStop, commonUsage, STOP_OUT, usageOut } from './common-response.js';
import { emptyUsage, isObj, str, type StopReason, type StreamEvent, type Usage } from './neutral.js';
import type { SseEvent } from './sse.js';

/**
 * Streams in the common format (`chat.completion.chunk` events, then `data: [DONE]`;
 * https://platform.openai.com/docs/api-reference/chat-streaming) to and from neutral events.
 */
type Obj = Record<string, unknown>;

export class CommonStreamParser {
  private started = false;
  /** the upstream's tool-call index → our call number */
  private readonly calls = new Map<number, number>();
  private open = new Set<number>();
  private finished = false;

  parse(e: SseEvent): StreamEvent[] {
    if (e.data === '[DONE]') return [];
    let o: Obj;
    try {
      o = JSON.parse(e.data) as Obj;
    } catch {
      return [];
    }
    const out: StreamEvent[] = [];
    if (isObj(o.error)) return [{ t: 'error', type: String(o.error.type ?? 'api_error'), message: String(o.error.message ?? 'upstream error') }];
    if (!this.started) {
      this.started = true;
      out.push({ t: 'start', id: str(o.id), model: str(o.model) });
    }
    const choice = Array.isArray(o.choices) && isObj(o.choices[0]) ? o.choices[0] : undefined;
    const d = choice && isObj(choice.delta) ? choice.delta : {};
    const thinking = str(d.reasoning_content) ?? str(d.reasoning);
    if (thinking) out.push({ t: 'thinking', text: thinking });
    if (typeof d.content === 'string' && d.content) out.push({ t: 'text', text: d.content });
    if (Array.isArray(d.tool_calls)) {
      for (const tc of d.tool_calls as Obj[]) {
        const index = typeof tc.index === 'number' ? tc.index : this.calls.size;
        const fn = isObj(tc.function) ? tc.function : {};
        let call = this.calls.get(index);
        if (call === undefined) {
          call = this.calls.size;
          this.calls.set(index, call);
          this.open.add(call);
          const extra = isObj(tc.extra_content) && isObj(tc.extra_content.google) ? tc.extra_content.google : undefined;
          out.push({ t: 'tool_start', call, id: String(tc.id ?? `call_${call}`), name: String(fn.name ?? ''), signature: str(extra?.thought_signature) });
        }
        if (typeof fn.arguments === 'string' && fn.arguments) out.push({ t: 'tool_args', call, json: fn.arguments });
      }
    }
    if (choice && choice.finish_reason && !this.finished) {
      this.finished = true;
      for (const call of this.open) out.push({ t: 'tool_end', call });
      this.open.clear();
      out.push({ t: 'finish', stop: commonStop(choice.finish_reason, this.calls.size > 0) });
    }
    // Groq puts a stream's usage in x_groq.usage (https://console.groq.com/docs/api-reference#chat-create)
    const usage = isObj(o.usage) ? o.usage : isObj(o.x_groq) && isObj(o.x_groq.usage) ? o.x_groq.usage : undefined;
    if (usage) out.push({ t: 'usage', usage: commonUsage(usage) });
    return out;
  }
}

/** Neutral events → common chunks: tool calls as index-keyed deltas, their arguments in order, usage last. */
export class CommonStreamWriter {
  private id = 'chatcmpl-agw';
  private model: string;
  private readonly created = Math.floor(Date.now() / 1000);
  private usage: Usage = emptyUsage();
  private stop: StopReason | undefined;
  private readonly withArgs = new Set<number>();
  private thinking = '';
  private done = false;

  constructor(fallbackModel: string) {
    this.model = fallbackModel;
  }

  private chunk(delta: Obj, finish: string | null = null): string {
    return `data: ${JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  }

  write(e: StreamEvent): string {
    if (this.done) return '';
    switch (e.t) {
      case 'start':
        if (e.id) this.id = e.id;
        if (e.model) this.model = e.model;
        if (e.usage) Object.assign(this.usage, e.usage);
        return this.chunk({ role: 'assistant', content: '' });
      case 'text':
        return this.chunk({ content: e.text });
      case 'thinking':
        this.thinking += e.text;
        return this.chunk({ reasoning_content: e.text });
      case 'signature': {
        const block = { type: 'thinking', thinking: this.thinking, signature: e.signature };
        this.thinking = '';
        return this.chunk({ thinking_blocks: [block] });
      }
      case 'redacted':
        return this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: e.data }] });
      case 'tool_start': {
        const call: Obj = { index: e.call, id: e.id, type: 'function', function: { name: e.name, arguments: '' } };
        if (e.signature) call.extra_content = { google: { thought_signature: e.signature } };
        return this.chunk({ tool_calls: [call] });
      }
      case 'tool_args':
        this.withArgs.add(e.call);
        return this.chunk({ tool_calls: [{ index: e.call, function: { arguments: e.json } }] });
      case 'tool_end':
        // a call without arguments still parses: "{}"
        return this.withArgs.has(e.call) ? '' : this.chunk({ tool_calls: [{ index: e.call, function: { arguments: '{}' } }] });
      case 'finish':
        if (this.stop) return '';
        this.stop = e.stop;
        return this.chunk({}, STOP_OUT[e.stop]);
      case 'usage':
        Object.assign(this.usage, e.usage);
        return '';
      case 'error':
        this.done = true;
        return `data: ${JSON.stringify({ error: { message: e.message, type: e.type } })}\n\n`;
    }
  }

  end(): string {
    if (this.done) return '';
    this.done = true;
    const finish = this.stop ? '' : this.chunk({}, 'stop');
    const usage = `data: ${JSON.stringify({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: usageOut(this.usage) })}\n\n`;
    return `${finish}${usage}data: [DONE]\n\n`;
  }
}
