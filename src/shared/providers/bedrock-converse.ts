/**
 * A messages-format body (https://docs.claude.com/en/api/messages) as Bedrock's Converse
 * API takes it (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html,
 * ContentBlock, ToolConfiguration, InferenceConfiguration): the one request shape of every
 * Bedrock model, for the models agw does not call in the messages format itself (Nova,
 * Llama, Mistral, …). Binary content is base64 in JSON. What Converse has no place for is
 * left out and its name added to `dropped`.
 */
type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const drop = (dropped: string[], name: string) => {
  if (!dropped.includes(name)) dropped.push(name);
};

/** Converse's image formats, by media type. */
const IMAGE_FORMATS: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

/** A document's name as Converse allows it (letters, digits, single spaces, hyphens, parentheses, brackets). */
const docName = (title: unknown) =>
  (typeof title === 'string' ? title : 'document').replace(/[^A-Za-z0-9\-()[\] ]/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 200) || 'document';

function image(b: Obj, dropped: string[]): Obj | undefined {
  const src = isObj(b.source) ? b.source : {};
  const format = IMAGE_FORMATS[String(src.media_type)];
  if (src.type === 'base64' && format) return { image: { format, source: { bytes: String(src.data) } } };
  drop(dropped, src.type === 'base64' ? `image.${String(src.media_type)}` : `image.source.${String(src.type)}`);
  return undefined;
}

function block(b: Obj, dropped: string[]): Obj | undefined {
  if (b.cache_control !== undefined) drop(dropped, 'cache_control');
  switch (b.type) {
    case 'text':
      return typeof b.text === 'string' && b.text ? { text: b.text } : undefined;
    case 'image':
      return image(b, dropped);
    case 'document': {
      const src = isObj(b.source) ? b.source : {};
      if (src.type === 'base64' && src.media_type === 'application/pdf') return { document: { format: 'pdf', name: docName(b.title), source: { bytes: String(src.data) } } };
      if (src.type === 'text') return { text: String(src.data ?? '') };
      drop(dropped, `document.source.${String(src.type)}`);
      return undefined;
    }
    case 'tool_use':
      return { toolUse: { toolUseId: String(b.id), name: String(b.name), input: isObj(b.input) ? b.input : {} } };
    case 'tool_result': {
      const content: Obj[] = [];
      if (typeof b.content === 'string') content.push({ text: b.content });
      else if (Array.isArray(b.content)) {
        for (const c of b.content as unknown[]) {
          const x = isObj(c) && (c.type === 'text' || c.type === 'image') ? block(c, dropped) : undefined;
          if (x) content.push(x);
        }
      }
      if (!content.length) content.push({ text: '' });
      return { toolResult: { toolUseId: String(b.tool_use_id), content, ...(b.is_error === true && { status: 'error' }) } };
    }
    case 'thinking':
      return { reasoningContent: { reasoningText: { text: String(b.thinking ?? ''), ...(typeof b.signature === 'string' && b.signature && { signature: b.signature }) } } };
    case 'redacted_thinking':
      return { reasoningContent: { redactedContent: String(b.data ?? '') } };
    default:
      drop(dropped, String(b.type));
      return undefined;
  }
}

function content(c: unknown, dropped: string[]): Obj[] {
  if (typeof c === 'string') return c ? [{ text: c }] : [];
  if (!Array.isArray(c)) return [];
  const out: Obj[] = [];
  for (const b of c as unknown[]) {
    const x = isObj(b) ? block(b, dropped) : undefined;
    if (x) out.push(x);
  }
  return out;
}

function toolChoice(tc: Obj, dropped: string[]): Obj | undefined {
  if (tc.disable_parallel_tool_use === true) drop(dropped, 'tool_choice.disable_parallel_tool_use');
  if (tc.type === 'auto') return { auto: {} };
  if (tc.type === 'any') return { any: {} };
  if (tc.type === 'tool' && typeof tc.name === 'string') return { tool: { name: tc.name } };
  drop(dropped, 'tool_choice'); // `none`: Converse has no way to forbid the tools it is given
  return undefined;
}

/** The fields of the messages format Converse has a place for; `model` and `stream` are in the path. */
const TAKEN = new Set(['model', 'stream', 'messages', 'system', 'max_tokens', 'temperature', 'top_p', 'stop_sequences', 'tools', 'tool_choice']);

export function converseBody(b: Obj, dropped: string[]): Obj {
  for (const k of Object.keys(b)) if (!TAKEN.has(k)) drop(dropped, k);
  const messages: Obj[] = [];
  for (const m of Array.isArray(b.messages) ? (b.messages as unknown[]) : []) {
    if (!isObj(m)) continue;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const c = content(m.content, dropped);
    if (!c.length) continue;
    const last = messages.at(-1);
    if (last?.role === role) (last.content as Obj[]).push(...c);
    else messages.push({ role, content: c });
  }
  const out: Obj = { messages };
  const system = content(b.system, dropped).filter((x) => typeof x.text === 'string');
  if (system.length) out.system = system;
  const inference: Obj = {};
  if (typeof b.max_tokens === 'number') inference.maxTokens = b.max_tokens;
  if (typeof b.temperature === 'number') inference.temperature = b.temperature;
  if (typeof b.top_p === 'number') inference.topP = b.top_p;
  if (Array.isArray(b.stop_sequences) && b.stop_sequences.length) inference.stopSequences = b.stop_sequences;
  if (Object.keys(inference).length) out.inferenceConfig = inference;
  if (Array.isArray(b.tools) && b.tools.length) {
    const tools: Obj[] = [];
    for (const t of b.tools as unknown[]) {
      if (!isObj(t)) continue;
      if (t.type !== undefined && t.type !== 'custom') {
        drop(dropped, `tools.${String(t.type)}`);
        continue;
      }
      if (t.cache_control !== undefined) drop(dropped, 'cache_control');
      const spec: Obj = { name: String(t.name), inputSchema: { json: isObj(t.input_schema) ? t.input_schema : { type: 'object', properties: {} } } };
      if (typeof t.description === 'string' && t.description) spec.description = t.description;
      tools.push({ toolSpec: spec });
    }
    if (tools.length) {
      const choice = isObj(b.tool_choice) ? toolChoice(b.tool_choice, dropped) : undefined;
      out.toolConfig = { tools, ...(choice && { toolChoice: choice }) };
    }
  }
  return out;
}
