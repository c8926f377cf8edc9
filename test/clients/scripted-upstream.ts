import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback provider that plays the model's side of a two-turn tool loop, in the
 * Anthropic Messages format or the OpenAI chat format, JSON or streamed (SSE as the
 * providers document it, see test/conformance/fixtures): while the conversation holds no
 * tool result it asks for `call` (when the request offers that tool); once it holds one it
 * answers `final(result)` with the result's text, so a test can see that the client ran its
 * tool and sent the output back. Any other request (a client's side calls: titles,
 * warm-ups) gets a short text answer; one asking for more output than the model's limit is
 * refused with 400 as the provider refuses it. Every request is recorded.
 */
export interface ScriptedCall {
  /** the tool the model asks for (matched by name among the request's tools) */
  name: string;
  input: Record<string, unknown>;
}

export interface Recorded {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** what the mock answered: the tool call, the final text, or another text */
  answered: 'tool' | 'final' | 'other';
}

export interface ScriptedUpstream {
  url: string;
  format: 'anthropic' | 'openai';
  requests: Recorded[];
  close(): Promise<void>;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The text of the last tool result in the conversation, if any. */
function toolResult(format: 'anthropic' | 'openai', body: Obj): string | undefined {
  const msgs = arr(body.messages).map(obj);
  if (format === 'openai') {
    const last = [...msgs].reverse().find((m) => m.role === 'tool');
    if (!last) return undefined;
    return typeof last.content === 'string' ? last.content : arr(last.content).map((p) => String(obj(p).text ?? '')).join('');
  }
  for (const m of [...msgs].reverse()) {
    for (const b of arr(m.content).map(obj)) {
      if (b.type !== 'tool_result') continue;
      return typeof b.content === 'string' ? b.content : arr(b.content).map((p) => String(obj(p).text ?? '')).join('');
    }
  }
  return undefined;
}

function offers(format: 'anthropic' | 'openai', body: Obj, name: string): boolean {
  return arr(body.tools).some((t) => (format === 'openai' ? obj(obj(t).function).name : obj(t).name) === name);
}

let seq = 0;

function anthropicAnswer(model: string, plan: { tool?: ScriptedCall; text?: string }, stream: boolean): { type: string; body: string } {
  const id = `msg_scripted_${++seq}`;
  const usage = { input_tokens: 120, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 20 };
  const toolId = `toolu_scripted_${seq}`;
  if (!stream) {
    const content = plan.tool ? [{ type: 'tool_use', id: toolId, name: plan.tool.name, input: plan.tool.input }] : [{ type: 'text', text: plan.text }];
    return {
      type: 'application/json',
      body: JSON.stringify({ id, type: 'message', role: 'assistant', model, content, stop_reason: plan.tool ? 'tool_use' : 'end_turn', stop_sequence: null, usage }),
    };
  }
  const ev = (e: Obj) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`;
  let out = ev({ type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } });
  if (plan.tool) {
    const json = JSON.stringify(plan.tool.input);
    const cut = Math.floor(json.length / 2);
    out += ev({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: toolId, name: plan.tool.name, input: {} } });
    for (const part of ['', json.slice(0, cut), json.slice(cut)]) out += ev({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: part } });
  } else {
    const text = plan.text ?? '';
    out += ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } });
    for (const part of [text.slice(0, 8), text.slice(8)]) out += ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: part } });
  }
  out += ev({ type: 'content_block_stop', index: 0 });
  out += ev({ type: 'message_delta', delta: { stop_reason: plan.tool ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 20 } });
  out += ev({ type: 'message_stop' });
  return { type: 'text/event-stream', body: out };
}

function openaiAnswer(model: string, plan: { tool?: ScriptedCall; text?: string }, stream: boolean, includeUsage: boolean): { type: string; body: string } {
  const id = `chatcmpl-scripted-${++seq}`;
  const created = 1730000000;
  const usage = { prompt_tokens: 120, completion_tokens: 20, total_tokens: 140 };
  const callId = `call_scripted_${seq}`;
  const finish = plan.tool ? 'tool_calls' : 'stop';
  if (!stream) {
    const message = plan.tool
      ? { role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name: plan.tool.name, arguments: JSON.stringify(plan.tool.input) } }] }
      : { role: 'assistant', content: plan.text };
    return { type: 'application/json', body: JSON.stringify({ id, object: 'chat.completion', created, model, choices: [{ index: 0, message, finish_reason: finish }], usage }) };
  }
  const chunk = (choices: unknown[], extra: Obj = {}) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
  let out = chunk([{ index: 0, delta: { role: 'assistant', content: plan.tool ? null : '' }, finish_reason: null }]);
  if (plan.tool) {
    const json = JSON.stringify(plan.tool.input);
    const cut = Math.floor(json.length / 2);
    out += chunk([{ index: 0, delta: { tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: plan.tool.name, arguments: '' } }] }, finish_reason: null }]);
    for (const part of [json.slice(0, cut), json.slice(cut)]) out += chunk([{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: part } }] }, finish_reason: null }]);
  } else {
    const text = plan.text ?? '';
    for (const part of [text.slice(0, 8), text.slice(8)]) out += chunk([{ index: 0, delta: { content: part }, finish_reason: null }]);
  }
  out += chunk([{ index: 0, delta: {}, finish_reason: finish }]);
  if (includeUsage) out += chunk([], { usage });
  return { type: 'text/event-stream', body: `${out}data: [DONE]\n\n` };
}

/**
 * Output limits the real APIs enforce with a 400 (a request asking for more is refused, not
 * trimmed): gpt-4o-mini writes at most 16,384 tokens
 * (https://platform.openai.com/docs/models/gpt-4o-mini), Claude Sonnet 4.5 64,000
 * (https://docs.claude.com/en/docs/about-claude/models/overview). Claude Code asks for
 * `max_tokens: 32000` whatever the model, so a gateway that passes it on unchanged to
 * gpt-4o-mini breaks the loop here as it would against OpenAI.
 */
const OUTPUT_LIMITS: Record<string, number> = { 'gpt-4o-mini': 16_384, 'claude-sonnet-4-5': 64_000 };

function overLimit(format: 'anthropic' | 'openai', body: Obj): string | undefined {
  const model = String(body.model);
  const asked = format === 'openai' ? (body.max_completion_tokens ?? body.max_tokens) : body.max_tokens;
  const limit = OUTPUT_LIMITS[model];
  if (typeof asked !== 'number' || limit === undefined || asked <= limit) return undefined;
  return format === 'openai'
    ? JSON.stringify({ error: { message: `max_tokens is too large: ${asked}. This model supports at most ${limit} completion tokens, whereas you provided ${asked}.`, type: 'invalid_request_error', param: 'max_tokens', code: 'invalid_value' } })
    : JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: `max_tokens: ${asked} > ${limit}, which is the maximum allowed number of output tokens for ${model}` } });
}

export async function startScriptedUpstream(format: 'anthropic' | 'openai', call: ScriptedCall, final: (result: string) => string): Promise<ScriptedUpstream> {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Obj = {};
      try {
        body = obj(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        /* not JSON */
      }
      const path = req.url ?? '/';
      if (format === 'anthropic' && /\/v1\/messages\/count_tokens/.test(path)) {
        requests.push({ path, headers: req.headers, body, answered: 'other' });
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ input_tokens: 120 }));
        return;
      }
      const chat = format === 'anthropic' ? /\/v1\/messages(\?|$)/.test(path) : /\/chat\/completions(\?|$)/.test(path);
      if (req.method !== 'POST' || !chat) {
        requests.push({ path, headers: req.headers, body, answered: 'other' });
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { type: 'not_found_error', message: `no ${req.method} ${path} here` } }));
        return;
      }
      const refused = overLimit(format, body);
      if (refused) {
        requests.push({ path, headers: req.headers, body, answered: 'other' });
        res.writeHead(400, { 'content-type': 'application/json' }).end(refused);
        return;
      }
      const result = toolResult(format, body);
      const answered: Recorded['answered'] = result !== undefined ? 'final' : offers(format, body, call.name) ? 'tool' : 'other';
      requests.push({ path, headers: req.headers, body, answered });
      const plan = answered === 'tool' ? { tool: call } : { text: answered === 'final' ? final(result!) : 'OK.' };
      const model = String(body.model ?? 'scripted');
      const a =
        format === 'anthropic'
          ? anthropicAnswer(model, plan, body.stream === true)
          : openaiAnswer(model, plan, body.stream === true, obj(body.stream_options).include_usage === true);
      res.writeHead(200, { 'content-type': a.type, 'cache-control': 'no-cache' }).end(a.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    format,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
