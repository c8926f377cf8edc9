import { messagesStop, messagesUsage, STOP_OUT, usageOut } from './messages-response.js';
import { emptyUsage, isObj, str, type StopReason, type StreamEvent, type Usage } from './neutral.js';
import { frame, type SseEvent } from './sse.js';

/**
 * Streams in the messages format (message_start, content_block_start / _delta / _stop,
 * message_delta, message_stop; https://docs.claude.com/en/docs/build-with-claude/streaming)
 * to and from neutral events.
 */
type Obj = Record<string, unknown>;

export class MessagesStreamParser {
  /** content block index → tool call number, for tool_use blocks */
  private readonly toolOf = new Map<number, number>();
  private calls = 0;

  parse(e: SseEvent): StreamEvent[] {
    let o: Obj;
    try {
      o = JSON.parse(e.data) as Obj;
    } catch {
      return [];
    }
    const index = typeof o.index === 'number' ? o.index : -1;
    switch (o.type) {
      case 'message_start': {
        const m = isObj(o.message) ? o.message : {};
        return [{ t: 'start', id: str(m.id), model: str(m.model), usage: isObj(m.usage) ? { ...messagesUsage(m.usage), output: 0 } : undefined }];
      }
      case 'content_block_start': {
        const b = isObj(o.content_block) ? o.content_block : {};
        if (b.type === 'tool_use') {
          const call = this.calls++;
          this.toolOf.set(index, call);
          return [{ t: 'tool_start', call, id: String(b.id), name: String(b.name) }];
        }
        if (b.type === 'text' && typeof b.text === 'string' && b.text) return [{ t: 'text', text: b.text }];
        if (b.type === 'redacted_thinking') return [{ t: 'redacted', data: String(b.data ?? '') }];
        return [];
      }
      case 'content_block_delta': {
        const d = isObj(o.delta) ? o.delta : {};
        if (d.type === 'text_delta') return [{ t: 'text', text: String(d.text ?? '') }];
        if (d.type === 'thinking_delta') return [{ t: 'thinking', text: String(d.thinking ?? '') }];
        if (d.type === 'signature_delta') return [{ t: 'signature', signature: String(d.signature ?? '') }];
        const call = this.toolOf.get(index);
        if (d.type === 'input_json_delta' && call !== undefined && d.partial_json) return [{ t: 'tool_args', call, json: String(d.partial_json) }];
        return [];
      }
      case 'content_block_stop': {
        const call = this.toolOf.get(index);
        return call === undefined ? [] : [{ t: 'tool_end', call }];
      }
      case 'message_delta': {
        const d = isObj(o.delta) ? o.delta : {};
        const out: StreamEvent[] = [{ t: 'finish', stop: messagesStop(d.stop_reason), stopSequence: str(d.stop_sequence) ?? null }];
        if (isObj(o.usage)) out.push({ t: 'usage', usage: messagesUsage(o.usage) });
        return out;
      }
      case 'error': {
        const err = isObj(o.error) ? o.error : {};
        return [{ t: 'error', type: String(err.type ?? 'api_error'), message: String(err.message ?? 'upstream error') }];
      }
      default:
        return [];
    }
  }
}

type Block = { kind: 'text' | 'thinking' | 'tool'; index: number; call?: number };

/** Neutral events → messages events, one content block at a time; message_delta carries the stop reason and usage at the end. */
export class MessagesStreamWriter {
  private started = false;
  private id = `msg_agw${Date.now().toString(36)}`;
  private model: string;
  private usage: Usage = emptyUsage();
  private stop: StopReason = 'stop';
  private stopSequence: string | null = null;
  private block: Block | undefined;
  private next = 0;
  /** tool call number → its block index (a late argument fragment still finds its block) */
  private readonly toolBlock = new Map<number, number>();
  private done = false;

  constructor(fallbackModel: string) {
    this.model = fallbackModel;
  }

  private start(): string {
    if (this.started) return '';
    this.started = true;
    const message = { id: this.id, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usageOut(this.usage), output_tokens: 0 } };
    return frame({ type: 'message_start', message }, 'message_start');
  }

  private close(): string {
    if (!this.block) return '';
    const index = this.block.index;
    this.block = undefined;
    return frame({ type: 'content_block_stop', index }, 'content_block_stop');
  }

  private open(kind: Block['kind'], contentBlock: Obj, call?: number): string {
    const out = this.close();
    this.block = { kind, index: this.next++, call };
    return out + frame({ type: 'content_block_start', index: this.block.index, content_block: contentBlock }, 'content_block_start');
  }

  private delta(index: number, delta: Obj): string {
    return frame({ type: 'content_block_delta', index, delta }, 'content_block_delta');
  }

  write(e: StreamEvent): string {
    if (this.done) return '';
    if (e.t === 'start') {
      if (e.id) this.id = e.id;
      if (e.model) this.model = e.model;
      if (e.usage) Object.assign(this.usage, e.usage);
      return this.start();
    }
    let out = this.start();
    switch (e.t) {
      case 'text':
        if (this.block?.kind !== 'text') out += this.open('text', { type: 'text', text: '' });
        return out + this.delta(this.block!.index, { type: 'text_delta', text: e.text });
      case 'thinking':
        if (this.block?.kind !== 'thinking') out += this.open('thinking', { type: 'thinking', thinking: '', signature: '' });
        return out + this.delta(this.block!.index, { type: 'thinking_delta', thinking: e.text });
      case 'signature':
        if (this.block?.kind !== 'thinking') out += this.open('thinking', { type: 'thinking', thinking: '', signature: '' });
        return out + this.delta(this.block!.index, { type: 'signature_delta', signature: e.signature }) + this.close();
      case 'redacted':
        return out + this.open('thinking', { type: 'redacted_thinking', data: e.data }) + this.close();
      case 'tool_start':
        if (e.signature) out += this.write({ t: 'signature', signature: e.signature });
        out += this.open('tool', { type: 'tool_use', id: e.id, name: e.name, input: {} }, e.call);
        this.toolBlock.set(e.call, this.block!.index);
        return out;
      case 'tool_args': {
        const index = this.toolBlock.get(e.call);
        return index === undefined ? out : out + this.delta(index, { type: 'input_json_delta', partial_json: e.json });
      }
      case 'tool_end':
        return this.block?.kind === 'tool' && this.block.call === e.call ? out + this.close() : out;
      case 'finish':
        this.stop = e.stop;
        this.stopSequence = e.stopSequence ?? null;
        return out;
      case 'usage':
        Object.assign(this.usage, e.usage);
        return out;
      case 'error':
        this.done = true;
        return out + frame({ type: 'error', error: { type: e.type, message: e.message } }, 'error');
    }
  }

  end(): string {
    if (this.done) return '';
    this.done = true;
    const out = this.start() + this.close();
    return (
      out +
      frame({ type: 'message_delta', delta: { stop_reason: STOP_OUT[this.stop], stop_sequence: this.stopSequence }, usage: usageOut(this.usage) }, 'message_delta') +
      frame({ type: 'message_stop' }, 'message_stop')
    );
  }
}
