import type { Fixture, Meaning } from './load.js';

/**
 * Reference readers: what an answer means, read from its wire form in each provider's
 * documented format. The corpus test checks every fixture's hand-written `meaning` against
 * them (so a fixture cannot contradict itself), and the translation runner reads what a
 * caller got with the same code. Deliberately plain: no gateway code is used here.
 */
export type WireFormat = 'chat' | 'messages' | 'gemini' | 'responses' | 'cohere-v2' | 'converse';

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** The wire format of a fixture, from its folder and name (see README.md). */
export function formatOf(path: string): WireFormat {
  const [provider, file] = path.split('/');
  if (file.startsWith('responses-')) return 'responses';
  if (file.startsWith('v2-')) return 'cohere-v2';
  // Bedrock: Converse, or an Anthropic model's own body through InvokeModel; Vertex: Gemini or Claude
  if (file.startsWith('converse-')) return 'converse';
  if (provider === 'anthropic' || file.startsWith('invoke-') || file.startsWith('claude-')) return 'messages';
  if (provider === 'google' || file.startsWith('gemini-')) return 'gemini';
  return 'chat';
}

function parseArgs(s: unknown): Record<string, unknown> {
  if (typeof s !== 'string') return obj(s);
  return s === '' ? {} : (JSON.parse(s) as Record<string, unknown>);
}

/** Drops empty fields so meanings compare on what is there. */
function tidy(m: Meaning): Meaning {
  const out: Meaning = {};
  if (m.text) out.text = m.text;
  if (m.thinking) out.thinking = m.thinking;
  if (m.toolCalls?.length) out.toolCalls = m.toolCalls;
  if (m.finish) out.finish = m.finish;
  if (m.usage && Object.keys(m.usage).length) out.usage = m.usage;
  return out;
}

function chatUsage(u: Obj): Record<string, number> {
  const out: Record<string, number> = {};
  const put = (k: string, v: unknown) => {
    if (num(v) !== undefined) out[k] = v as number;
  };
  put('prompt_tokens', u.prompt_tokens);
  put('completion_tokens', u.completion_tokens);
  put('cached_tokens', obj(u.prompt_tokens_details).cached_tokens);
  put('reasoning_tokens', obj(u.completion_tokens_details).reasoning_tokens);
  put('prompt_cache_hit_tokens', u.prompt_cache_hit_tokens);
  put('prompt_cache_miss_tokens', u.prompt_cache_miss_tokens);
  return out;
}

function messagesUsage(u: Obj, into: Record<string, number> = {}): Record<string, number> {
  for (const k of ['input_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens']) {
    if (num(u[k]) !== undefined) into[k] = u[k] as number;
  }
  const cc = obj(u.cache_creation);
  for (const k of ['ephemeral_5m_input_tokens', 'ephemeral_1h_input_tokens']) if (num(cc[k]) !== undefined) into[k] = cc[k] as number;
  return into;
}

function geminiUsage(u: Obj): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of ['promptTokenCount', 'cachedContentTokenCount', 'candidatesTokenCount', 'thoughtsTokenCount']) out[k] = num(u[k]) ?? 0;
  return out;
}

/** Bedrock's TokenUsage (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html); cacheDetails by TTL. */
function converseUsage(u: Obj): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of ['inputTokens', 'outputTokens', 'totalTokens', 'cacheReadInputTokens', 'cacheWriteInputTokens']) if (num(u[k]) !== undefined) out[k] = u[k] as number;
  for (const d of arr(u.cacheDetails).map(obj)) if (num(d.inputTokens) !== undefined) out[`cacheDetails.${String(d.ttl)}`] = d.inputTokens as number;
  return out;
}

/** The counts Bedrock adds to an InvokeModel stream's last chunk (amazon-bedrock-invocationMetrics). */
function invocationMetrics(m: Obj, into: Record<string, number>): void {
  for (const k of ['inputTokenCount', 'outputTokenCount', 'cacheReadInputTokenCount', 'cacheWriteInputTokenCount']) if (num(m[k]) !== undefined) into[k] = m[k] as number;
}

function responsesUsage(u: Obj): Record<string, number> {
  return {
    input_tokens: num(u.input_tokens) ?? 0,
    cached_tokens: num(obj(u.input_tokens_details).cached_tokens) ?? 0,
    output_tokens: num(u.output_tokens) ?? 0,
    reasoning_tokens: num(obj(u.output_tokens_details).reasoning_tokens) ?? 0,
  };
}

function cohereUsage(u: Obj): Record<string, number> {
  const b = obj(u.billed_units);
  const t = obj(u.tokens);
  return { billed_input_tokens: num(b.input_tokens) ?? 0, billed_output_tokens: num(b.output_tokens) ?? 0, input_tokens: num(t.input_tokens) ?? 0, output_tokens: num(t.output_tokens) ?? 0 };
}

/** What one complete JSON answer means. */
export function readJson(format: WireFormat, body: Obj): Meaning {
  switch (format) {
    case 'chat': {
      const c = obj(arr(body.choices)[0]);
      const m = obj(c.message);
      return tidy({
        text: typeof m.content === 'string' ? m.content : undefined,
        thinking: typeof m.reasoning_content === 'string' ? m.reasoning_content : undefined,
        toolCalls: arr(m.tool_calls).map((t) => ({ name: String(obj(obj(t).function).name), arguments: parseArgs(obj(obj(t).function).arguments) })),
        finish: typeof c.finish_reason === 'string' ? c.finish_reason : undefined,
        usage: chatUsage(obj(body.usage)),
      });
    }
    case 'messages': {
      const blocks = arr(body.content).map(obj);
      return tidy({
        text: blocks.filter((b) => b.type === 'text').map((b) => String(b.text)).join(''),
        thinking: blocks.filter((b) => b.type === 'thinking').map((b) => String(b.thinking)).join(''),
        toolCalls: blocks.filter((b) => b.type === 'tool_use').map((b) => ({ name: String(b.name), arguments: obj(b.input) })),
        finish: typeof body.stop_reason === 'string' ? body.stop_reason : undefined,
        usage: messagesUsage(obj(body.usage)),
      });
    }
    case 'gemini': {
      const c = obj(arr(body.candidates)[0]);
      const parts = arr(obj(c.content).parts).map(obj);
      return tidy({
        text: parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => String(p.text)).join(''),
        thinking: parts.filter((p) => typeof p.text === 'string' && p.thought).map((p) => String(p.text)).join(''),
        toolCalls: parts.filter((p) => p.functionCall).map((p) => ({ name: String(obj(p.functionCall).name), arguments: obj(obj(p.functionCall).args) })),
        finish: typeof c.finishReason === 'string' ? c.finishReason : undefined,
        usage: geminiUsage(obj(body.usageMetadata)),
      });
    }
    case 'responses': {
      const msgs = arr(body.output).map(obj).filter((o) => o.type === 'message');
      const text = msgs.flatMap((m) => arr(m.content).map(obj)).filter((p) => p.type === 'output_text').map((p) => String(p.text)).join('');
      const calls = arr(body.output).map(obj).filter((o) => o.type === 'function_call');
      return tidy({
        text,
        toolCalls: calls.map((c) => ({ name: String(c.name), arguments: parseArgs(c.arguments) })),
        finish: typeof body.status === 'string' ? body.status : undefined,
        usage: responsesUsage(obj(body.usage)),
      });
    }
    case 'cohere-v2': {
      const m = obj(body.message);
      return tidy({
        text: arr(m.content).map(obj).filter((p) => p.type === 'text').map((p) => String(p.text)).join(''),
        toolCalls: arr(m.tool_calls).map((t) => ({ name: String(obj(obj(t).function).name), arguments: parseArgs(obj(obj(t).function).arguments) })),
        finish: typeof body.finish_reason === 'string' ? body.finish_reason : undefined,
        usage: cohereUsage(obj(body.usage)),
      });
    }
    case 'converse': {
      const blocks = arr(obj(obj(body.output).message).content).map(obj);
      return tidy({
        text: blocks.filter((b) => typeof b.text === 'string').map((b) => String(b.text)).join(''),
        thinking: blocks.map((b) => obj(obj(b.reasoningContent).reasoningText).text).filter((t) => typeof t === 'string').join(''),
        toolCalls: blocks.filter((b) => b.toolUse).map((b) => ({ name: String(obj(b.toolUse).name), arguments: obj(obj(b.toolUse).input) })),
        finish: typeof body.stopReason === 'string' ? body.stopReason : undefined,
        usage: converseUsage(obj(body.usage)),
      });
    }
  }
}

/** What a stream means, from its events' data payloads in order (`[DONE]` included or not). */
export function readStream(format: WireFormat, payloads: unknown[]): Meaning {
  let text = '';
  let thinking = '';
  let finish: string | undefined;
  let usage: Record<string, number> = {};
  const calls: { name: string; args: string; input?: Obj }[] = [];
  const byIndex = new Map<number, { name: string; args: string }>();
  for (const raw of payloads) {
    if (typeof raw === 'string') continue;
    const e = obj(raw);
    switch (format) {
      case 'chat': {
        for (const c of arr(e.choices).map(obj)) {
          const d = obj(c.delta);
          if (typeof d.content === 'string') text += d.content;
          if (typeof d.reasoning_content === 'string') thinking += d.reasoning_content;
          for (const t of arr(d.tool_calls).map(obj)) {
            const i = num(t.index) ?? 0;
            const f = obj(t.function);
            let call = byIndex.get(i);
            if (!call) {
              call = { name: '', args: '' };
              byIndex.set(i, call);
              calls.push(call);
            }
            if (typeof f.name === 'string' && f.name) call.name = f.name;
            if (typeof f.arguments === 'string') call.args += f.arguments;
          }
          if (typeof c.finish_reason === 'string') finish = c.finish_reason;
        }
        const u = obj(e.usage ?? obj(e.x_groq).usage);
        if (Object.keys(u).length) usage = chatUsage(u);
        break;
      }
      case 'messages': {
        if (e.type === 'message_start') usage = messagesUsage(obj(obj(e.message).usage));
        if (e.type === 'content_block_start') {
          const b = obj(e.content_block);
          if (b.type === 'tool_use') {
            const call = { name: String(b.name), args: '' };
            byIndex.set(num(e.index) ?? 0, call);
            calls.push(call);
          }
          if (b.type === 'text' && typeof b.text === 'string') text += b.text;
        }
        if (e.type === 'content_block_delta') {
          const d = obj(e.delta);
          if (d.type === 'text_delta') text += String(d.text);
          if (d.type === 'thinking_delta') thinking += String(d.thinking);
          if (d.type === 'input_json_delta') byIndex.get(num(e.index) ?? 0)!.args += String(d.partial_json);
        }
        if (e.type === 'message_delta') {
          const d = obj(e.delta);
          if (typeof d.stop_reason === 'string') finish = d.stop_reason;
          messagesUsage(obj(e.usage), usage);
        }
        if (e['amazon-bedrock-invocationMetrics']) invocationMetrics(obj(e['amazon-bedrock-invocationMetrics']), usage);
        break;
      }
      case 'converse': {
        // one decoded event stream event: {"<event type>": payload}
        const start = obj(obj(e.contentBlockStart).start);
        if (start.toolUse) {
          const call = { name: String(obj(start.toolUse).name), args: '' };
          byIndex.set(num(obj(e.contentBlockStart).contentBlockIndex) ?? 0, call);
          calls.push(call);
        }
        const delta = obj(e.contentBlockDelta);
        const d = obj(delta.delta);
        if (typeof d.text === 'string') text += d.text;
        if (typeof obj(d.reasoningContent).text === 'string') thinking += String(obj(d.reasoningContent).text);
        if (typeof obj(d.toolUse).input === 'string') byIndex.get(num(delta.contentBlockIndex) ?? 0)!.args += String(obj(d.toolUse).input);
        if (typeof obj(e.messageStop).stopReason === 'string') finish = String(obj(e.messageStop).stopReason);
        if (e.metadata) usage = converseUsage(obj(obj(e.metadata).usage));
        break;
      }
      case 'gemini': {
        const m = readJson('gemini', e);
        text += m.text ?? '';
        thinking += m.thinking ?? '';
        for (const t of m.toolCalls ?? []) calls.push({ name: t.name, args: '', input: t.arguments });
        if (m.finish) finish = m.finish;
        if (e.usageMetadata) usage = m.usage ?? usage;
        break;
      }
      case 'responses': {
        if (e.type === 'response.output_text.delta') text += String(e.delta);
        if (e.type === 'response.completed') {
          const r = obj(e.response);
          finish = String(r.status);
          usage = responsesUsage(obj(r.usage));
        }
        break;
      }
      case 'cohere-v2': {
        if (e.type === 'content-delta') text += String(obj(obj(obj(e.delta).message).content).text ?? '');
        if (e.type === 'message-end') {
          const d = obj(e.delta);
          finish = String(d.finish_reason);
          usage = cohereUsage(obj(d.usage));
        }
        break;
      }
    }
  }
  return tidy({
    text,
    thinking,
    toolCalls: calls.map((c) => ({ name: c.name, arguments: c.input ?? parseArgs(c.args) })),
    finish,
    usage,
  });
}

/** What a fixture's wire form means (its `meaning` must say the same). */
export function readFixture(f: Fixture): Meaning {
  const format = formatOf(f.path);
  if (f.kind === 'json') return readJson(format, f.body);
  // an InvokeModel event stream's chunks carry the model's own events
  const payloads = f.events === 'eventstream' && format !== 'converse' ? f.payloads.map((p) => obj(p).chunk ?? p) : f.payloads;
  return readStream(format, payloads);
}

/** Parses an SSE body into its data payloads (JSON parsed, `[DONE]` kept as a string). */
export function ssePayloads(text: string): unknown[] {
  const out: unknown[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
      .join('\n');
    if (!data) continue;
    if (data === '[DONE]') out.push(data);
    else out.push(JSON.parse(data));
  }
  return out;
}
