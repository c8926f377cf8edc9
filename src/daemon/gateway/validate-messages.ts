import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import { requireShallowBody } from './body-depth.js';

/**
 * preValidation for Messages API bodies (POST /gateway/v1/messages and its count_tokens):
 * 400 MISSING_MODEL / MISSING_MESSAGES first, as unified chat answers them; then the body's
 * depth (body-depth.ts); then `system`, each message's content and the custom tools, on the
 * body as parsed (schema validation coerces types, and a converter would send an object as
 * "[object Object]"): a string, or content blocks, each an object with a string `type` and
 * the fields agw reads of its type of the right type (https://docs.claude.com/en/api/messages:
 * text, image, document, tool_use, tool_result, thinking, redacted_thinking). A
 * tool_result's content is a string or blocks of the types it may hold (text, image,
 * document, search_result), never another tool_result.
 */
type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const bad = (field: string, what: string) => new AgwError('INVALID_REQUEST', `${field} ${what}`, { field, location: 'body' });

/** Absent or a string (null taken as absent where the converters read `?? ''`). */
const optStr = (v: unknown) => v === undefined || v === null || typeof v === 'string';

const IN_TOOL_RESULT = new Set(['text', 'image', 'document', 'search_result']);

/** A source object: base64 (string data and media_type), url (string url), text (string data); other types are the converters' to drop. */
function checkSource(src: unknown, field: string): void {
  if (!isObj(src) || typeof src.type !== 'string') throw bad(field, 'must be a source object with a string type');
  const ok = src.type === 'base64' ? typeof src.data === 'string' && typeof src.media_type === 'string' : src.type === 'url' ? typeof src.url === 'string' : src.type === 'text' ? typeof src.data === 'string' : true;
  if (!ok) throw bad(field, `of type ${src.type} must carry its fields as strings (base64: data, media_type; url: url; text: data)`);
}

function checkBlock(b: unknown, field: string, inToolResult: boolean): void {
  if (!isObj(b) || typeof b.type !== 'string') throw bad(field, 'must be a content block: an object with a string type');
  if (inToolResult && !IN_TOOL_RESULT.has(b.type)) throw bad(field, `has type ${JSON.stringify(b.type.slice(0, 64))}, which a tool_result's content does not take (text, image, document, search_result)`);
  switch (b.type) {
    case 'text':
      if (typeof b.text !== 'string') throw bad(`${field}.text`, 'must be a string');
      return;
    case 'image':
    case 'document':
      return checkSource(b.source, `${field}.source`);
    case 'tool_use':
      if (typeof b.id !== 'string') throw bad(`${field}.id`, 'must be a string');
      if (typeof b.name !== 'string') throw bad(`${field}.name`, 'must be a string');
      if (b.input !== undefined && !isObj(b.input)) throw bad(`${field}.input`, 'must be an object');
      return;
    case 'tool_result':
      if (typeof b.tool_use_id !== 'string') throw bad(`${field}.tool_use_id`, 'must be a string');
      if (b.content === undefined || typeof b.content === 'string') return;
      if (!Array.isArray(b.content)) throw bad(`${field}.content`, 'must be a string or an array of content blocks');
      b.content.forEach((c, k) => checkBlock(c, `${field}.content[${k}]`, true));
      return;
    case 'thinking':
      if (!optStr(b.thinking)) throw bad(`${field}.thinking`, 'must be a string');
      if (!optStr(b.signature)) throw bad(`${field}.signature`, 'must be a string');
      return;
    case 'redacted_thinking':
      if (!optStr(b.data)) throw bad(`${field}.data`, 'must be a string');
  }
}

/** A string, or an array of content blocks. */
function checkContent(c: unknown, field: string): void {
  if (typeof c === 'string') return;
  if (!Array.isArray(c)) throw bad(field, 'must be a string or an array of content blocks ({"type":…})');
  c.forEach((b, j) => checkBlock(b, `${field}[${j}]`, false));
}

export function requireMessagesBody(req: FastifyRequest, _reply: unknown, done: (err?: Error) => void): void {
  checkMessagesBody(req.body);
  done();
}

function checkMessagesBody(b: unknown): void {
  if (!isObj(b)) throw new AgwError('INVALID_REQUEST', 'the body must be a JSON object with model and messages', { field: 'body', location: 'body' });
  const { model, messages } = b;
  if (model === undefined || model === null || model === '') throw new AgwError('MISSING_MODEL', 'model is required');
  if (messages === undefined || messages === null || (Array.isArray(messages) && messages.length === 0)) {
    throw new AgwError('MISSING_MESSAGES', 'messages is required and must hold at least one message');
  }
  requireShallowBody(b);
  if (b.system !== undefined) checkContent(b.system, 'system');
  if (!Array.isArray(messages)) return; // the schema names it
  messages.forEach((m: unknown, i) => {
    if (isObj(m)) checkContent(m.content, `messages[${i}].content`);
  });
  if (Array.isArray(b.tools)) {
    b.tools.forEach((t: unknown, i) => {
      // a custom tool (no type, or "custom"); server tools are the converters' to drop by type
      if (!isObj(t) || (t.type !== undefined && t.type !== 'custom')) return;
      if (typeof t.name !== 'string') throw bad(`tools[${i}].name`, 'must be a string');
      if (t.input_schema !== undefined && !isObj(t.input_schema)) throw bad(`tools[${i}].input_schema`, 'must be an object (a JSON Schema)');
    });
  }
}
