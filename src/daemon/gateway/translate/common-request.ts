import type { ChatApi } from '../../../shared/providers/index.js';
import {
  drop, effortOf, isObj, num, str,
  type ImagePart, type NeutralRequest, type Part, type TextPart, type Tool, type ToolChoice, type Turn,
} from './neutral.js';

/**
 * Requests in the common format (OpenAI Chat Completions,
 * https://platform.openai.com/docs/api-reference/chat/create) to and from the neutral form.
 */
type Obj = Record<string, unknown>;

/** Fields the neutral form carries (or that shape the call itself); any other field is dropped and named. */
const CARRIED = new Set([
  'model', 'messages', 'stream', 'stream_options', 'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'tools',
  'tool_choice', 'parallel_tool_calls', 'response_format', 'reasoning_effort', 'user', 'n', 'seed', 'presence_penalty', 'frequency_penalty',
]);

function userParts(content: unknown, dropped: string[]): Part[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const out: Part[] = [];
  for (const p of content as unknown[]) {
    if (!isObj(p)) continue;
    if (p.type === 'text') out.push({ type: 'text', text: str(p.text) ?? '' });
    else if (p.type === 'image_url' && isObj(p.image_url)) {
      const img: ImagePart = { type: 'image', url: String(p.image_url.url) };
      if (typeof p.image_url.detail === 'string') img.detail = p.image_url.detail;
      out.push(img);
    } else if (p.type === 'file' && isObj(p.file) && typeof p.file.file_data === 'string') {
      const m = /^data:([^;,]+);base64,/.exec(p.file.file_data);
      if (m) out.push({ type: 'file', mediaType: m[1], data: p.file.file_data.slice(m[0].length), filename: str(p.file.filename) });
      else drop(dropped, 'file');
    } else drop(dropped, String(p.type));
  }
  return out;
}

const textOf = (content: unknown): string =>
  typeof content === 'string' ? content : Array.isArray(content) ? (content as unknown[]).map((p) => (isObj(p) && typeof p.text === 'string' ? p.text : '')).join('') : '';

function assistantParts(m: Obj): Part[] {
  const out: Part[] = [];
  // thinking the gateway handed out with an earlier answer (thinking_blocks), so a tool loop can carry it back
  if (Array.isArray(m.thinking_blocks)) {
    for (const b of m.thinking_blocks as unknown[]) {
      if (!isObj(b)) continue;
      if (b.type === 'thinking') out.push({ type: 'thinking', text: str(b.thinking) ?? '', signature: str(b.signature) });
      else if (b.type === 'redacted_thinking') out.push({ type: 'thinking', text: '', redacted: str(b.data) ?? '' });
    }
  }
  const text = textOf(m.content);
  if (text) out.push({ type: 'text', text });
  if (Array.isArray(m.tool_calls)) {
    for (const c of m.tool_calls as unknown[]) {
      if (!isObj(c)) continue;
      const fn = isObj(c.function) ? c.function : {};
      const extra = isObj(c.extra_content) && isObj(c.extra_content.google) ? c.extra_content.google : undefined;
      out.push({ type: 'tool_call', id: String(c.id), name: String(fn.name), args: String(fn.arguments ?? ''), signature: str(extra?.thought_signature) });
    }
  }
  return out;
}

function toolResult(m: Obj): Part {
  const content: TextPart[] = [{ type: 'text', text: textOf(m.content) }];
  return { type: 'tool_result', id: String(m.tool_call_id), content };
}

function toolChoice(v: unknown, dropped: string[]): ToolChoice | undefined {
  if (v === 'auto' || v === 'none' || v === 'required') return v;
  if (isObj(v) && v.type === 'function' && isObj(v.function) && typeof v.function.name === 'string') return { name: v.function.name };
  if (v !== undefined && v !== null) drop(dropped, 'tool_choice');
  return undefined;
}

function tools(v: unknown, dropped: string[]): Tool[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const out: Tool[] = [];
  for (const t of v as unknown[]) {
    if (!isObj(t)) continue;
    if (t.type !== 'function' || !isObj(t.function)) {
      drop(dropped, `tools.${String(t.type)}`);
      continue;
    }
    const f = t.function;
    out.push({
      name: String(f.name),
      description: str(f.description),
      parameters: isObj(f.parameters) ? f.parameters : { type: 'object', properties: {} },
      strict: typeof f.strict === 'boolean' ? f.strict : undefined,
    });
  }
  return out;
}

/** Common-format body → neutral. The body has passed validate.ts. */
export function commonToNeutral(b: Obj): NeutralRequest {
  const dropped: string[] = [];
  for (const k of Object.keys(b)) if (!CARRIED.has(k) && b[k] !== null) drop(dropped, k);
  const system: TextPart[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn['role'], parts: Part[]) => {
    const last = turns.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else if (parts.length) turns.push({ role, parts });
  };
  for (const m of b.messages as unknown[]) {
    if (!isObj(m)) continue;
    // a participant's name has no place elsewhere; on a `tool` message (LangChain sends the
    // tool's name there) it repeats the call's name, which tool_call_id already ties it to
    if (m.name !== undefined && m.name !== null && m.role !== 'tool') drop(dropped, 'messages.name');
    if (m.role === 'system' || m.role === 'developer') {
      const t = textOf(m.content);
      if (t) system.push({ type: 'text', text: t });
    } else if (m.role === 'assistant') push('assistant', assistantParts(m));
    else if (m.role === 'tool') push('user', [toolResult(m)]);
    else push('user', userParts(m.content, dropped));
  }
  const rf = b.response_format;
  const req: NeutralRequest = {
    system,
    turns,
    stream: b.stream === true,
    tools: tools(b.tools, dropped),
    toolChoice: toolChoice(b.tool_choice, dropped),
    parallelToolCalls: typeof b.parallel_tool_calls === 'boolean' ? b.parallel_tool_calls : undefined,
    maxTokens: num(b.max_completion_tokens) ?? num(b.max_tokens),
    temperature: num(b.temperature),
    topP: num(b.top_p),
    stop: typeof b.stop === 'string' ? [b.stop] : Array.isArray(b.stop) ? (b.stop as string[]) : undefined,
    user: str(b.user),
    n: num(b.n),
    seed: num(b.seed),
    presencePenalty: num(b.presence_penalty),
    frequencyPenalty: num(b.frequency_penalty),
    dropped,
  };
  if (isObj(rf) && rf.type === 'json_object') req.responseFormat = { type: 'json_object' };
  else if (isObj(rf) && rf.type === 'json_schema' && isObj(rf.json_schema) && isObj(rf.json_schema.schema)) {
    const j = rf.json_schema;
    req.responseFormat = { type: 'json_schema', name: str(j.name), schema: j.schema as Obj, strict: typeof j.strict === 'boolean' ? j.strict : undefined };
  } else if (isObj(rf) && rf.type !== 'text') drop(dropped, 'response_format');
  const effort = b.reasoning_effort;
  if (effort === 'none' || effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high') req.reasoning = { effort };
  else if (effort === 'xhigh') req.reasoning = { effort: 'high' };
  else if (effort !== undefined && effort !== null) drop(dropped, 'reasoning_effort');
  return req;
}

function contentOut(parts: Part[]): string | Obj[] {
  if (parts.every((p) => p.type === 'text')) return parts.map((p) => (p as TextPart).text).join('');
  return parts.flatMap((p): Obj[] => {
    if (p.type === 'text') return [{ type: 'text', text: p.text }];
    if (p.type === 'image') return [{ type: 'image_url', image_url: p.detail ? { url: p.url, detail: p.detail } : { url: p.url } }];
    if (p.type === 'file') return [{ type: 'file', file: { filename: p.filename ?? 'document.pdf', file_data: `data:${p.mediaType};base64,${p.data}` } }];
    return [];
  });
}

/** Turns → common messages: tool results become `tool` messages (images in them follow as a user message). */
function messagesOut(req: NeutralRequest): Obj[] {
  const out: Obj[] = [];
  if (req.system.length) out.push({ role: 'system', content: req.system.map((p) => p.text).join('\n\n') });
  for (const turn of req.turns) {
    if (turn.role === 'assistant') {
      const text = turn.parts.filter((p): p is TextPart => p.type === 'text').map((p) => p.text).join('');
      const calls = turn.parts.flatMap((p) =>
        p.type === 'tool_call' ? [{ id: p.id, type: 'function', function: { name: p.name, arguments: p.args || '{}' } }] : [],
      );
      const m: Obj = { role: 'assistant', content: text || (calls.length ? null : '') };
      if (calls.length) m.tool_calls = calls;
      out.push(m);
      continue;
    }
    const rest: Part[] = [];
    const toolImages: ImagePart[] = [];
    for (const p of turn.parts) {
      if (p.type !== 'tool_result') {
        rest.push(p);
        continue;
      }
      const text = p.content.filter((c): c is TextPart => c.type === 'text').map((c) => c.text).join('');
      out.push({ role: 'tool', tool_call_id: p.id, content: text });
      toolImages.push(...p.content.filter((c): c is ImagePart => c.type === 'image'));
    }
    const user = [...toolImages, ...rest];
    if (user.length) out.push({ role: 'user', content: contentOut(user) });
  }
  return out;
}

function toolChoiceOut(c: ToolChoice): unknown {
  return typeof c === 'string' ? c : { type: 'function', function: { name: c.name } };
}

/**
 * Neutral → a common-format provider's body: `model`, usage on streams, the output cap (the
 * caller's, at most the model's limit `maxOutput`: a messages-format caller such as Claude
 * Code always sends one, often above a common-format model's limit, which the provider
 * would refuse), the provider's own names for fields (`api.renamed`), and what it does not
 * take (`api.unsupported`, reasoning settings to a model that does not reason) named in
 * `dropped`, in the common format's words.
 */
export function neutralToCommon(req: NeutralRequest, model: string, maxOutput: number, api: ChatApi, dropped: string[]): Obj {
  const b: Obj = { model, messages: messagesOut(req) };
  if (req.stream) {
    b.stream = true;
    b.stream_options = { include_usage: true };
  }
  if (req.maxTokens !== undefined) b.max_completion_tokens = Math.min(req.maxTokens, maxOutput);
  if (req.temperature !== undefined) b.temperature = req.temperature;
  if (req.topP !== undefined) b.top_p = req.topP;
  if (req.topK !== undefined) drop(dropped, 'top_k');
  if (req.stop?.length) b.stop = req.stop;
  if (req.tools?.length) {
    b.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, ...(t.description !== undefined && { description: t.description }), parameters: t.parameters, ...(t.strict !== undefined && { strict: t.strict }) },
    }));
  }
  if (req.toolChoice !== undefined) b.tool_choice = toolChoiceOut(req.toolChoice);
  if (req.parallelToolCalls !== undefined && req.tools?.length) b.parallel_tool_calls = req.parallelToolCalls;
  const rf = req.responseFormat;
  if (rf?.type === 'json_object') b.response_format = { type: 'json_object' };
  else if (rf) b.response_format = { type: 'json_schema', json_schema: { name: rf.name ?? 'response', schema: rf.schema, ...(rf.strict !== undefined && { strict: rf.strict }) } };
  if (req.reasoning) {
    const effort = effortOf(req.reasoning);
    if (effort !== undefined) b.reasoning_effort = effort;
  }
  if (req.user !== undefined) b.user = req.user;
  if (req.n !== undefined) b.n = req.n;
  if (req.seed !== undefined) b.seed = req.seed;
  if (req.presencePenalty !== undefined) b.presence_penalty = req.presencePenalty;
  if (req.frequencyPenalty !== undefined) b.frequency_penalty = req.frequencyPenalty;
  adaptCommon(b, model, api, dropped);
  return b;
}

/**
 * A common-format body made fit for one provider, in place: unsupported fields removed and
 * named, renamed fields renamed, reasoning_effort removed for a model that does not reason.
 * Costs a few property lookups when the provider takes everything (openai).
 */
export function adaptCommon(b: Obj, model: string, api: ChatApi, dropped: string[]): void {
  if (b.reasoning_effort !== undefined && !(api.reasoningModels?.test(model) ?? false)) {
    // "none" (or null) asked of a model that does not reason is what it does anyway
    if (b.reasoning_effort !== 'none' && b.reasoning_effort !== null) drop(dropped, 'reasoning_effort');
    delete b.reasoning_effort;
  }
  const rf = b.response_format;
  if (api.jsonSchemaModels && isObj(rf) && rf.type === 'json_schema' && !api.jsonSchemaModels.test(model)) {
    // still JSON, without the schema
    b.response_format = { type: 'json_object' };
    drop(dropped, 'response_format.json_schema');
  }
  if (api.unsupported) {
    for (const k of api.unsupported) {
      if (b[k] === undefined) continue;
      if (b[k] !== null) drop(dropped, k); // null: not set, nothing lost
      delete b[k];
    }
  }
  if (api.renamed) {
    for (const [from, to] of Object.entries(api.renamed)) {
      if (b[from] === undefined) continue;
      if (b[to] === undefined) b[to] = b[from];
      delete b[from];
    }
  }
}

