import { messagesAnswer } from '../translate/messages-response.js';
import { MessagesStreamWriter } from '../translate/messages-stream.js';
import { emptyUsage, isObj, num, str, type NeutralAnswer, type StopReason, type StreamEvent, type Usage } from '../translate/neutral.js';
import { EventStreamDecoder } from './eventstream.js';

/**
 * Bedrock's Converse answers (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * API_runtime_ConverseStream.html) in the messages format, for an alias or smart-route call
 * to a model agw calls through Converse: the JSON answer whole, the event stream frame by
 * frame (messageStart, contentBlockStart / Delta / Stop, messageStop, metadata) as the
 * messages format's SSE. The answer rewriters then take it as any messages-format answer.
 */
type Obj = Record<string, unknown>;

const STOP: Record<string, StopReason> = {
  end_turn: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  stop_sequence: 'stop_sequence',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};
const stopOf = (r: unknown): StopReason => STOP[String(r)] ?? 'stop';

/** Converse usage → neutral (inputTokens exclude cache reads and writes, which it reports apart). */
function usageOf(u: unknown): Partial<Usage> {
  if (!isObj(u)) return {};
  return { input: num(u.inputTokens) ?? 0, output: num(u.outputTokens) ?? 0, cacheRead: num(u.cacheReadInputTokens) ?? 0, cacheWrite: num(u.cacheWriteInputTokens) ?? 0 };
}

/** A Converse JSON answer as a messages-format answer. */
export function converseToMessages(body: Buffer, model: string): Buffer {
  const o = JSON.parse(body.toString('utf8')) as Obj;
  const msg = isObj(o.output) && isObj(o.output.message) ? o.output.message : {};
  const parts: NeutralAnswer['parts'] = [];
  for (const b of Array.isArray(msg.content) ? (msg.content as Obj[]) : []) {
    if (typeof b.text === 'string') parts.push({ type: 'text', text: b.text });
    else if (isObj(b.toolUse)) parts.push({ type: 'tool_call', id: String(b.toolUse.toolUseId), name: String(b.toolUse.name), args: JSON.stringify(b.toolUse.input ?? {}) });
    else if (isObj(b.reasoningContent)) {
      const r = b.reasoningContent;
      if (isObj(r.reasoningText)) parts.push({ type: 'thinking', text: String(r.reasoningText.text ?? ''), signature: str(r.reasoningText.signature) });
      else if (typeof r.redactedContent === 'string') parts.push({ type: 'thinking', text: '', redacted: r.redactedContent });
    }
  }
  const answer: NeutralAnswer = { id: `msg_bedrock_${Date.now().toString(36)}`, model, parts, stop: stopOf(o.stopReason), stopSequence: null, usage: { ...emptyUsage(), ...usageOf(o.usage) } };
  return Buffer.from(JSON.stringify(messagesAnswer(answer)));
}

/** A ConverseStream answer (AWS event stream bytes) as the messages format's SSE text. */
export class ConverseStreamToSse {
  private readonly decoder = new EventStreamDecoder();
  private readonly writer: MessagesStreamWriter;
  /** content block index → tool call number */
  private readonly toolOf = new Map<number, number>();
  private calls = 0;

  constructor(model: string) {
    this.writer = new MessagesStreamWriter(model);
  }

  private events(type: string, e: Obj): StreamEvent[] {
    const index = num(e.contentBlockIndex) ?? -1;
    switch (type) {
      case 'messageStart':
        return [{ t: 'start' }];
      case 'contentBlockStart': {
        const tool = isObj(e.start) && isObj(e.start.toolUse) ? e.start.toolUse : undefined;
        if (!tool) return [];
        const call = this.calls++;
        this.toolOf.set(index, call);
        return [{ t: 'tool_start', call, id: String(tool.toolUseId), name: String(tool.name) }];
      }
      case 'contentBlockDelta': {
        const d = isObj(e.delta) ? e.delta : {};
        if (typeof d.text === 'string') return [{ t: 'text', text: d.text }];
        const call = this.toolOf.get(index);
        if (isObj(d.toolUse) && call !== undefined && typeof d.toolUse.input === 'string' && d.toolUse.input) return [{ t: 'tool_args', call, json: d.toolUse.input }];
        const r = isObj(d.reasoningContent) ? d.reasoningContent : undefined;
        if (typeof r?.text === 'string') return [{ t: 'thinking', text: r.text }];
        if (typeof r?.signature === 'string') return [{ t: 'signature', signature: r.signature }];
        if (typeof r?.redactedContent === 'string') return [{ t: 'redacted', data: r.redactedContent }];
        return [];
      }
      case 'contentBlockStop': {
        const call = this.toolOf.get(index);
        return call === undefined ? [] : [{ t: 'tool_end', call }];
      }
      case 'messageStop':
        return [{ t: 'finish', stop: stopOf(e.stopReason), stopSequence: null }];
      case 'metadata':
        return [{ t: 'usage', usage: usageOf(e.usage) }];
      default:
        return [];
    }
  }

  push(chunk: Buffer): string {
    let out = '';
    for (const f of this.decoder.push(chunk)) {
      const kind = f.headers[':message-type'];
      if (kind === 'exception' || kind === 'error') {
        let message = f.payload.toString('utf8');
        try {
          message = String((JSON.parse(message) as { message?: unknown }).message ?? message);
        } catch {
          /* the payload as it is */
        }
        out += this.writer.write({ t: 'error', type: f.headers[':exception-type'] ?? f.headers[':error-code'] ?? 'api_error', message });
        continue;
      }
      if (kind !== 'event') continue;
      let e: Obj;
      try {
        e = JSON.parse(f.payload.toString('utf8')) as Obj;
      } catch {
        continue;
      }
      for (const ev of this.events(f.headers[':event-type'] ?? '', e)) out += this.writer.write(ev);
    }
    return out;
  }

  end(): string {
    return this.writer.end();
  }
}
