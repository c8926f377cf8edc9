import { emptyUsage, isObj, num, str, type NeutralAnswer, type StopReason, type ThinkingPart, type ToolCallPart, type Usage } from './neutral.js';

/** Answers in the common format (https://platform.openai.com/docs/api-reference/chat/object) to and from the neutral form. */
type Obj = Record<string, unknown>;

const STOP_IN: Record<string, StopReason> = { stop: 'stop', length: 'length', tool_calls: 'tool_calls', function_call: 'tool_calls', content_filter: 'content_filter' };
export const STOP_OUT: Record<StopReason, string> = { stop: 'stop', stop_sequence: 'stop', length: 'length', tool_calls: 'tool_calls', content_filter: 'content_filter' };

export function commonStop(reason: unknown, hasToolCalls: boolean): StopReason {
  const r = STOP_IN[String(reason)] ?? 'stop';
  // a named tool_choice answers "stop" with its tool call; the loop must go on
  return hasToolCalls && r === 'stop' ? 'tool_calls' : r;
}

/**
 * Common usage → neutral (prompt_tokens include cached ones). Cache hits are
 * `prompt_tokens_details.cached_tokens`, or DeepSeek's own `prompt_cache_hit_tokens`
 * (https://api-docs.deepseek.com/api/create-chat-completion), as usage.ts bills them.
 */
export function commonUsage(u: Obj): Partial<Usage> {
  const details = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {};
  const out = isObj(u.completion_tokens_details) ? u.completion_tokens_details : {};
  const cached = num(details.cached_tokens) ?? num(u.prompt_cache_hit_tokens) ?? 0;
  const write = num(details.cache_write_tokens) ?? 0;
  const prompt = num(u.prompt_tokens);
  const usage: Partial<Usage> = { cacheRead: cached, cacheWrite: write };
  if (prompt !== undefined) usage.input = Math.max(0, prompt - cached - write);
  if (num(u.completion_tokens) !== undefined) usage.output = num(u.completion_tokens);
  if (num(out.reasoning_tokens) !== undefined) usage.reasoning = num(out.reasoning_tokens);
  return usage;
}

/** Neutral usage → common usage, cache reads and writes in prompt_tokens_details. */
export function usageOut(u: Usage): Obj {
  const prompt = u.input + u.cacheRead + u.cacheWrite;
  const usage: Obj = {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: { cached_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite },
  };
  if (u.reasoning !== undefined) usage.completion_tokens_details = { reasoning_tokens: u.reasoning };
  return usage;
}

export function parseCommonAnswer(o: Obj, fallbackModel: string): NeutralAnswer {
  const choice = Array.isArray(o.choices) && isObj(o.choices[0]) ? o.choices[0] : {};
  const m = isObj(choice.message) ? choice.message : {};
  const parts: NeutralAnswer['parts'] = [];
  const reasoning = str(m.reasoning_content) ?? str(m.reasoning);
  if (reasoning) parts.push({ type: 'thinking', text: reasoning });
  const text = typeof m.content === 'string' ? m.content : '';
  if (text) parts.push({ type: 'text', text });
  const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Obj[]) : [];
  for (const c of calls) {
    const fn = isObj(c.function) ? c.function : {};
    parts.push({ type: 'tool_call', id: String(c.id ?? ''), name: String(fn.name ?? ''), args: String(fn.arguments ?? '') });
  }
  return {
    id: str(o.id) ?? 'chatcmpl-agw',
    model: str(o.model) ?? fallbackModel,
    parts,
    stop: commonStop(choice.finish_reason, calls.length > 0),
    usage: { ...emptyUsage(), ...(isObj(o.usage) ? commonUsage(o.usage) : {}) },
  };
}

/** A tool call in the common shape (a Gemini thought signature rides as Google documents it, in extra_content). */
export function toolCallOut(p: ToolCallPart): Obj {
  const call: Obj = { id: p.id, type: 'function', function: { name: p.name, arguments: p.args || '{}' } };
  if (p.signature) call.extra_content = { google: { thought_signature: p.signature } };
  return call;
}

/** Thinking as the common shape carries it: the text in reasoning_content, signed blocks in thinking_blocks. */
export function thinkingBlocks(parts: ThinkingPart[]): Obj[] {
  return parts.flatMap((p): Obj[] =>
    p.redacted ? [{ type: 'redacted_thinking', data: p.redacted }] : p.signature ? [{ type: 'thinking', thinking: p.text, signature: p.signature }] : [],
  );
}

export function commonAnswer(a: NeutralAnswer): Obj {
  const text = a.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('');
  const calls = a.parts.filter((p): p is ToolCallPart => p.type === 'tool_call');
  const thinking = a.parts.filter((p): p is ThinkingPart => p.type === 'thinking');
  const message: Obj = { role: 'assistant', content: text || (calls.length ? null : '') };
  if (calls.length) message.tool_calls = calls.map(toolCallOut);
  const reasoning = thinking.map((p) => p.text).join('');
  if (reasoning) message.reasoning_content = reasoning;
  const blocks = thinkingBlocks(thinking);
  if (blocks.length) message.thinking_blocks = blocks;
  return {
    id: a.id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: a.model,
    choices: [{ index: 0, message, finish_reason: STOP_OUT[a.stop], logprobs: null }],
    usage: usageOut(a.usage),
  };
}
