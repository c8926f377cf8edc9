import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import { requireShallowBody } from './body-depth.js';
import { markPhase } from '../telemetry/phases.js';

/**
 * preValidation for chat bodies: the spec's own codes for an absent model or messages
 * (400 MISSING_MODEL / MISSING_MESSAGES) come before schema validation, which then
 * answers 400 INVALID_REQUEST naming the field (ranges of temperature, top_p,
 * max_tokens, roles, types). The body's depth (body-depth.ts) and message content are
 * checked here too, before any coercion, in one pass over the messages. A callback hook,
 * not an async one: fastify goes on in the same turn (an async hook costs every call a
 * promise and a microtask before its handler).
 */
export function requireModelAndMessages(req: FastifyRequest, _reply: unknown, done: (err?: Error) => void): void {
  markPhase('parsed');
  checkModelAndMessages(req.body);
  done();
}

function checkModelAndMessages(b: unknown): void {
  if (!b || typeof b !== 'object' || Array.isArray(b)) {
    throw new AgwError('INVALID_REQUEST', 'the body must be a JSON object with model and messages', { field: 'body', location: 'body' });
  }
  const { model, messages } = b as { model?: unknown; messages?: unknown };
  if (model === undefined || model === null || model === '') throw new AgwError('MISSING_MODEL', 'model is required');
  if (messages === undefined || messages === null || (Array.isArray(messages) && messages.length === 0)) {
    throw new AgwError('MISSING_MESSAGES', 'messages is required and must hold at least one message');
  }
  requireShallowBody(b as Record<string, unknown>);
  if (Array.isArray(messages)) messages.forEach(checkMessage);
  const tools = (b as { tools?: unknown }).tools;
  if (Array.isArray(tools)) {
    tools.forEach((t: unknown, i) => {
      if (isObj(t) && t.type === 'function' && !(isObj(t.function) && typeof t.function.name === 'string' && t.function.name)) {
        throw bad(`tools[${i}].function.name`, 'is required: a function tool is {"type":"function","function":{"name","description","parameters"}}');
      }
    });
  }
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

const bad = (field: string, what: string) => new AgwError('INVALID_REQUEST', `${field} ${what}`, { field, location: 'body' });

/** A content part the common format has, well-formed: text, image_url (a data: or http(s): URL), file, input_audio. */
function partProblem(p: unknown, allowed: ReadonlySet<string>): string | undefined {
  if (!isObj(p) || typeof p.type !== 'string') return 'must be an object with a type';
  if (!allowed.has(p.type)) return `has type ${JSON.stringify(p.type)}, which this role does not take (it takes ${[...allowed].join(', ')})`;
  switch (p.type) {
    case 'text':
      return typeof p.text === 'string' ? undefined : 'must have a string text';
    case 'refusal':
      return typeof p.refusal === 'string' ? undefined : 'must have a string refusal';
    case 'image_url': {
      const url = isObj(p.image_url) ? p.image_url.url : undefined;
      if (typeof url !== 'string' || !/^(data:image\/[\w.+-]+;base64,|https?:\/\/)/.test(url)) return 'must have image_url.url, a data:image/…;base64, or http(s): URL';
      return undefined;
    }
    case 'file':
      return isObj(p.file) ? undefined : 'must have a file object';
    case 'input_audio':
      return isObj(p.input_audio) && typeof p.input_audio.data === 'string' ? undefined : 'must have input_audio.data';
  }
  return undefined;
}

const TEXT = new Set(['text']);
const USER = new Set(['text', 'image_url', 'file', 'input_audio']);
const ASSISTANT = new Set(['text', 'refusal']);

function checkToolCalls(calls: unknown, field: string): void {
  if (!Array.isArray(calls) || calls.length === 0) throw bad(field, 'must be a non-empty array of tool calls');
  calls.forEach((c, j) => {
    const fn = isObj(c) && isObj(c.function) ? c.function : undefined;
    if (!isObj(c) || typeof c.id !== 'string' || !fn || typeof fn.name !== 'string' || typeof fn.arguments !== 'string') {
      throw bad(`${field}[${j}]`, 'must be {"id","type":"function","function":{"name","arguments"}} with string id, name and arguments');
    }
  });
}

/** Absent, null or a string. */
const optStr = (v: unknown) => v === undefined || v === null || typeof v === 'string';

/**
 * The thinking an earlier answer handed out (agw's `thinking_blocks`, carried back in a tool
 * loop): objects with a string type; `thinking` blocks' thinking and signature, and
 * `redacted_thinking` blocks' data, strings when present (other types are ignored).
 */
function checkThinkingBlocks(blocks: unknown, field: string): void {
  if (!Array.isArray(blocks)) throw bad(field, 'must be an array of thinking blocks');
  blocks.forEach((b, j) => {
    const ok =
      isObj(b) &&
      typeof b.type === 'string' &&
      (b.type === 'thinking' ? optStr(b.thinking) && optStr(b.signature) : b.type === 'redacted_thinking' ? optStr(b.data) : true);
    if (!ok) throw bad(`${field}[${j}]`, 'must be {"type":"thinking","thinking","signature"} or {"type":"redacted_thinking","data"} with string values');
  });
}

/**
 * A message of the common format: content a string or a non-empty array of the parts its
 * role takes (user: text, image_url, file, input_audio; system, developer and tool: text;
 * assistant: text, refusal). An assistant turn with tool_calls may have content null or none;
 * a tool turn names its tool_call_id. Checked here, on the body as parsed, because schema
 * validation coerces types (a number would become a string and be forwarded, and billed).
 */
function checkMessage(m: unknown, i: number): void {
  if (!isObj(m)) return; // the schema names it
  const field = `messages[${i}].content`;
  const c = m.content;
  if (m.role === 'assistant' && m.tool_calls !== undefined) checkToolCalls(m.tool_calls, `messages[${i}].tool_calls`);
  if (m.role === 'assistant' && m.thinking_blocks !== undefined && m.thinking_blocks !== null) checkThinkingBlocks(m.thinking_blocks, `messages[${i}].thinking_blocks`);
  if (m.role === 'assistant' && (c === null || c === undefined) && m.tool_calls !== undefined) return;
  if (m.role === 'tool' && typeof m.tool_call_id !== 'string') throw bad(`messages[${i}].tool_call_id`, 'is required on a tool message (the id of the tool call it answers)');
  if (typeof c === 'string') return;
  const allowed = m.role === 'user' ? USER : m.role === 'assistant' ? ASSISTANT : TEXT;
  if (!Array.isArray(c) || c.length === 0) {
    throw bad(field, `must be a string or a non-empty array of content parts (${[...allowed].join(', ')})${m.role === 'assistant' ? ', or null with tool_calls' : ''}`);
  }
  c.forEach((p, j) => {
    const problem = partProblem(p, allowed);
    if (problem) throw bad(field, `[${j}] ${problem}`);
  });
}
