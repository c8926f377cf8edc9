import type { ChatApi } from '../../../shared/providers/index.js';
import { AgwError } from '../../../shared/errors.js';
import { thinking } from './messages-thinking.js';
import {
  argsObject, dataUrl, drop, isObj, num, str,
  type ImagePart, type NeutralRequest, type Part, type TextPart, type Tool, type ToolChoice, type Turn,
} from './neutral.js';

/**
 * Requests in the messages format (Anthropic Messages, https://docs.claude.com/en/api/messages)
 * to and from the neutral form.
 */
type Obj = Record<string, unknown>;

const CARRIED = new Set([
  'model', 'messages', 'max_tokens', 'system', 'stop_sequences', 'stream', 'temperature', 'top_p', 'top_k', 'tools', 'tool_choice',
  'thinking', 'metadata', 'output_config', 'output_format',
]);

function noteCache(b: Obj, dropped: string[]): void {
  if (b.cache_control !== undefined) drop(dropped, 'cache_control');
}

function imageOf(src: Obj, dropped: string[]): ImagePart | undefined {
  if (src.type === 'base64') return { type: 'image', url: `data:${String(src.media_type)};base64,${String(src.data)}` };
  if (src.type === 'url') return { type: 'image', url: String(src.url) };
  drop(dropped, `image.source.${String(src.type)}`);
  return undefined;
}

function block(b: Obj, dropped: string[]): Part[] {
  noteCache(b, dropped);
  switch (b.type) {
    case 'text':
      return [{ type: 'text', text: str(b.text) ?? '' }];
    case 'image': {
      const img = isObj(b.source) ? imageOf(b.source, dropped) : undefined;
      return img ? [img] : [];
    }
    case 'document': {
      const src = isObj(b.source) ? b.source : {};
      if (src.type === 'base64') return [{ type: 'file', mediaType: String(src.media_type), data: String(src.data), filename: str(b.title) }];
      if (src.type === 'text') return [{ type: 'text', text: String(src.data ?? '') }];
      drop(dropped, `document.source.${String(src.type)}`);
      return [];
    }
    case 'tool_use':
      return [{ type: 'tool_call', id: String(b.id), name: String(b.name), args: JSON.stringify(b.input ?? {}) }];
    case 'tool_result': {
      const content: (TextPart | ImagePart)[] = [];
      if (typeof b.content === 'string') content.push({ type: 'text', text: b.content });
      else if (Array.isArray(b.content)) {
        // what a tool_result holds (text, image, document), never another tool_result: no recursion
        for (const c of b.content as unknown[]) {
          if (!isObj(c) || (c.type !== 'text' && c.type !== 'image' && c.type !== 'document')) continue;
          for (const p of block(c, dropped)) if (p.type === 'text' || p.type === 'image') content.push(p);
        }
      }
      return [{ type: 'tool_result', id: String(b.tool_use_id), content, isError: b.is_error === true ? true : undefined }];
    }
    case 'thinking':
      return [{ type: 'thinking', text: str(b.thinking) ?? '', signature: str(b.signature) }];
    case 'redacted_thinking':
      return [{ type: 'thinking', text: '', redacted: str(b.data) ?? '' }];
    default:
      drop(dropped, String(b.type));
      return [];
  }
}

function parts(content: unknown, dropped: string[]): Part[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return (content as unknown[]).flatMap((b) => (isObj(b) ? block(b, dropped) : []));
}

function tools(v: unknown, dropped: string[]): Tool[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Tool[] = [];
  for (const t of v as unknown[]) {
    if (!isObj(t)) continue;
    if (t.type !== undefined && t.type !== 'custom') {
      drop(dropped, `tools.${String(t.type)}`); // a server tool (web search, code execution, …)
      continue;
    }
    noteCache(t, dropped);
    if (t.defer_loading !== undefined) drop(dropped, 'tools.defer_loading');
    if (t.input_examples !== undefined) drop(dropped, 'tools.input_examples');
    out.push({
      name: String(t.name),
      description: str(t.description),
      parameters: isObj(t.input_schema) ? t.input_schema : { type: 'object', properties: {} },
      strict: typeof t.strict === 'boolean' ? t.strict : undefined,
    });
  }
  return out;
}

function toolChoice(v: unknown): ToolChoice | undefined {
  if (!isObj(v)) return undefined;
  if (v.type === 'auto' || v.type === 'none') return v.type;
  if (v.type === 'any') return 'required';
  if (v.type === 'tool' && typeof v.name === 'string') return { name: v.name };
  return undefined;
}

/** Messages-format body → neutral. System turns inside `messages` join `system`. */
export function messagesToNeutral(b: Obj): NeutralRequest {
  const dropped: string[] = [];
  for (const k of Object.keys(b)) if (!CARRIED.has(k)) drop(dropped, k);
  const system: TextPart[] = [];
  const addSystem = (c: unknown) => {
    for (const p of parts(c, dropped)) if (p.type === 'text' && p.text) system.push(p);
  };
  addSystem(b.system);
  const turns: Turn[] = [];
  for (const m of b.messages as unknown[]) {
    if (!isObj(m)) continue;
    if (m.role === 'system') {
      addSystem(m.content);
      continue;
    }
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const ps = parts(m.content, dropped);
    const last = turns.at(-1);
    if (last?.role === role) last.parts.push(...ps);
    else if (ps.length) turns.push({ role, parts: ps });
  }
  const tc = isObj(b.tool_choice) ? b.tool_choice : undefined;
  const req: NeutralRequest = {
    system,
    turns,
    stream: b.stream === true,
    tools: tools(b.tools, dropped),
    toolChoice: toolChoice(tc),
    parallelToolCalls: tc?.disable_parallel_tool_use === true ? false : undefined,
    maxTokens: num(b.max_tokens),
    temperature: num(b.temperature),
    topP: num(b.top_p),
    topK: num(b.top_k),
    stop: Array.isArray(b.stop_sequences) ? (b.stop_sequences as string[]) : undefined,
    dropped,
  };
  if (isObj(b.metadata)) {
    if (typeof b.metadata.user_id === 'string') req.user = b.metadata.user_id;
    if (Object.keys(b.metadata).some((k) => k !== 'user_id')) drop(dropped, 'metadata');
  }
  const th = isObj(b.thinking) ? b.thinking : undefined;
  const reasoningFrom: string[] = [];
  if (th?.type === 'enabled') req.reasoning = { budget: num(th.budget_tokens) ?? 1024 };
  else if (th?.type === 'adaptive') req.reasoning = { adaptive: true };
  if (req.reasoning) reasoningFrom.push('thinking');
  const oc = isObj(b.output_config) ? b.output_config : {};
  const format = isObj(oc.format) ? oc.format : isObj(b.output_format) ? b.output_format : undefined;
  if (format?.type === 'json_schema' && isObj(format.schema)) req.responseFormat = { type: 'json_schema', schema: format.schema, strict: true };
  else if (format) drop(dropped, 'output_config.format');
  const effort = oc.effort;
  if (effort === 'low' || effort === 'medium' || effort === 'high' || effort === 'max') {
    if (!req.reasoning || req.reasoning.adaptive) {
      req.reasoning = { effort: effort === 'max' ? 'high' : effort };
      reasoningFrom.push('output_config.effort');
    } else drop(dropped, 'output_config.effort');
  }
  for (const k of Object.keys(oc)) if (k !== 'format' && k !== 'effort') drop(dropped, `output_config.${k}`);
  const formatName = [isObj(oc.format) ? 'output_config.format' : 'output_format'];
  req.callerNames = { ...CALLER_NAMES, reasoning_effort: reasoningFrom, response_format: formatName, 'response_format.json_schema': formatName };
  return req;
}

/** What a messages-format caller calls the fields the emitters name in the common format's words. */
const CALLER_NAMES: Readonly<Record<string, readonly string[]>> = {
  parallel_tool_calls: ['disable_parallel_tool_use'],
  user: ['metadata.user_id'],
  stop: ['stop_sequences'],
  max_completion_tokens: ['max_tokens'],
};

function imageBlock(p: ImagePart): Obj {
  const d = dataUrl(p.url);
  return d ? { type: 'image', source: { type: 'base64', media_type: d.mediaType, data: d.data } } : { type: 'image', source: { type: 'url', url: p.url } };
}

function blocksOut(turn: Turn, dropped: string[]): Obj[] {
  const first: Obj[] = []; // thinking (assistant) or tool results (user) lead the turn
  const rest: Obj[] = [];
  for (const p of turn.parts) {
    switch (p.type) {
      case 'text':
        if (p.text) rest.push({ type: 'text', text: p.text });
        break;
      case 'image':
        rest.push(imageBlock(p));
        break;
      case 'file':
        if (p.mediaType === 'application/pdf') rest.push({ type: 'document', source: { type: 'base64', media_type: p.mediaType, data: p.data } });
        else drop(dropped, 'file');
        break;
      case 'thinking':
        // only thinking the provider signed can go back to it
        if (p.redacted) first.push({ type: 'redacted_thinking', data: p.redacted });
        else if (p.signature) first.push({ type: 'thinking', thinking: p.text, signature: p.signature });
        break;
      case 'tool_call': {
        const input = argsObject(p.args);
        if (!input) throw new AgwError('INVALID_REQUEST', `the arguments of tool call ${p.id} are not a JSON object`, { field: 'messages', reason: 'tool_call_arguments' });
        rest.push({ type: 'tool_use', id: p.id, name: p.name, input });
        break;
      }
      case 'tool_result': {
        const c = p.content;
        const content = c.every((x) => x.type === 'text') ? c.map((x) => (x as TextPart).text).join('') : c.map((x) => (x.type === 'text' ? { type: 'text', text: x.text } : imageBlock(x)));
        first.push({ type: 'tool_result', tool_use_id: p.id, content, ...(p.isError && { is_error: true }) });
        break;
      }
    }
  }
  return [...first, ...rest];
}

function toolChoiceOut(c: ToolChoice | undefined, parallel: boolean | undefined): Obj | undefined {
  const noParallel = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (c === undefined) return parallel === false ? { type: 'auto', ...noParallel } : undefined;
  if (c === 'none') return { type: 'none' };
  if (c === 'auto') return { type: 'auto', ...noParallel };
  if (c === 'required') return { type: 'any', ...noParallel };
  return { type: 'tool', name: c.name, ...noParallel };
}

/**
 * Neutral → messages-format body. `maxOutput`: the model's output limit (max_tokens is
 * required there: the caller's, capped at the limit, else the limit).
 */
export function neutralToMessages(req: NeutralRequest, model: string, maxOutput: number, api: ChatApi, dropped: string[]): Obj {
  const messages: Obj[] = [];
  for (const turn of req.turns) {
    const content = blocksOut(turn, dropped);
    if (!content.length) continue;
    const last = messages.at(-1);
    if (last?.role === turn.role) (last.content as Obj[]).push(...content);
    else messages.push({ role: turn.role, content });
  }
  // a turn that is one text block goes as a string, as most callers write it
  for (const m of messages) {
    const c = m.content as Obj[];
    if (c.length === 1 && c[0].type === 'text') m.content = c[0].text;
  }
  const b: Obj = { model, max_tokens: Math.min(req.maxTokens ?? maxOutput, maxOutput), messages };
  // one system text as a string; several as text blocks, one for one
  if (req.system.length) b.system = req.system.length === 1 ? req.system[0].text : req.system.map((p) => ({ type: 'text', text: p.text }));
  if (req.stream) b.stream = true;
  if (req.temperature !== undefined) b.temperature = Math.min(req.temperature, 1);
  if (req.topP !== undefined) b.top_p = req.topP;
  if (req.topK !== undefined) b.top_k = req.topK;
  if (req.stop?.length) b.stop_sequences = req.stop;
  if (req.tools?.length) {
    b.tools = req.tools.map((t) => ({ name: t.name, ...(t.description !== undefined && { description: t.description }), input_schema: t.parameters, ...(t.strict !== undefined && { strict: t.strict }) }));
  }
  const tc = toolChoiceOut(req.toolChoice, req.tools?.length ? req.parallelToolCalls : undefined);
  if (tc) b.tool_choice = tc;
  if (req.user !== undefined) b.metadata = { user_id: req.user };
  if (req.n !== undefined && req.n !== 1) drop(dropped, 'n');
  if (req.seed !== undefined) drop(dropped, 'seed');
  if (req.presencePenalty !== undefined) drop(dropped, 'presence_penalty');
  if (req.frequencyPenalty !== undefined) drop(dropped, 'frequency_penalty');
  const rf = req.responseFormat;
  if (rf?.type === 'json_schema' && (api.jsonSchemaModels?.test(model) ?? true)) b.output_config = { format: { type: 'json_schema', schema: rf.schema } };
  else if (rf) drop(dropped, 'response_format');
  thinking(req, b, model, api, dropped);
  return b;
}

/**
 * A messages-format body sent on to a messages-format provider: the concrete model, the
 * output cap (the caller's, at most the model's limit, else the limit), system turns found
 * inside `messages` moved to `system`. Everything else is the caller's, unchanged.
 */
export function adaptMessages(b: Obj, model: string, maxOutput: number): Obj {
  const out: Obj = { ...b, model, max_tokens: Math.min(num(b.max_tokens) ?? maxOutput, maxOutput) };
  const msgs = (b.messages as unknown[]).filter(isObj);
  if (msgs.some((m) => m.role === 'system')) {
    const system: Obj[] = typeof b.system === 'string' ? [{ type: 'text', text: b.system }] : Array.isArray(b.system) ? [...(b.system as Obj[])] : [];
    for (const m of msgs) {
      if (m.role !== 'system') continue;
      if (typeof m.content === 'string') system.push({ type: 'text', text: m.content });
      else if (Array.isArray(m.content)) system.push(...(m.content as unknown[]).filter((c): c is Obj => isObj(c) && c.type === 'text'));
    }
    out.system = system;
    out.messages = msgs.filter((m) => m.role !== 'system');
  }
  return out;
}
