import { argsObject, emptyUsage, isObj, num, str, type NeutralAnswer, type StopReason, type Usage } from './neutral.js';

/** Answers in the messages format (https://docs.claude.com/en/api/messages) to and from the neutral form. */
type Obj = Record<string, unknown>;

const STOP_IN: Record<string, StopReason> = {
  end_turn: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  stop_sequence: 'stop_sequence',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};
export const STOP_OUT: Record<StopReason, string> = { stop: 'end_turn', stop_sequence: 'stop_sequence', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };

export const messagesStop = (reason: unknown): StopReason => STOP_IN[String(reason)] ?? 'stop';

/** Messages usage → neutral (input_tokens exclude cache reads and writes). */
export function messagesUsage(u: Obj): Partial<Usage> {
  const usage: Partial<Usage> = {};
  if (num(u.input_tokens) !== undefined) usage.input = num(u.input_tokens);
  if (num(u.output_tokens) !== undefined) usage.output = num(u.output_tokens);
  if (num(u.cache_read_input_tokens) !== undefined) usage.cacheRead = num(u.cache_read_input_tokens);
  if (num(u.cache_creation_input_tokens) !== undefined) usage.cacheWrite = num(u.cache_creation_input_tokens);
  return usage;
}

export function usageOut(u: Usage): Obj {
  return { input_tokens: u.input, output_tokens: u.output, cache_creation_input_tokens: u.cacheWrite, cache_read_input_tokens: u.cacheRead };
}

export function parseMessagesAnswer(o: Obj, fallbackModel: string): NeutralAnswer {
  const parts: NeutralAnswer['parts'] = [];
  for (const b of Array.isArray(o.content) ? (o.content as Obj[]) : []) {
    if (b.type === 'text') parts.push({ type: 'text', text: String(b.text ?? '') });
    else if (b.type === 'thinking') parts.push({ type: 'thinking', text: String(b.thinking ?? ''), signature: str(b.signature) });
    else if (b.type === 'redacted_thinking') parts.push({ type: 'thinking', text: '', redacted: String(b.data ?? '') });
    else if (b.type === 'tool_use') parts.push({ type: 'tool_call', id: String(b.id), name: String(b.name), args: JSON.stringify(b.input ?? {}) });
  }
  return {
    id: str(o.id) ?? 'msg_agw',
    model: str(o.model) ?? fallbackModel,
    parts,
    stop: messagesStop(o.stop_reason),
    stopSequence: str(o.stop_sequence) ?? null,
    usage: { ...emptyUsage(), ...(isObj(o.usage) ? messagesUsage(o.usage) : {}) },
  };
}

/** A signed thought from another provider (Gemini's) rides as a thinking block before its tool call, so it comes back. */
export function messagesAnswer(a: NeutralAnswer): Obj {
  const content: Obj[] = [];
  for (const p of a.parts) {
    if (p.type === 'text') content.push({ type: 'text', text: p.text });
    else if (p.type === 'thinking') content.push(p.redacted ? { type: 'redacted_thinking', data: p.redacted } : { type: 'thinking', thinking: p.text, signature: p.signature ?? '' });
    else {
      if (p.signature) content.push({ type: 'thinking', thinking: '', signature: p.signature });
      content.push({ type: 'tool_use', id: p.id, name: p.name, input: argsObject(p.args) ?? {} });
    }
  }
  return {
    id: a.id,
    type: 'message',
    role: 'assistant',
    model: a.model,
    content,
    stop_reason: STOP_OUT[a.stop],
    stop_sequence: a.stopSequence ?? null,
    usage: usageOut(a.usage),
  };
}
