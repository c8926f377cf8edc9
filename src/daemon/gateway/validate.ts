import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';

/**
 * preValidation for chat bodies: the spec's own codes for an absent model or messages
 * (400 MISSING_MODEL / MISSING_MESSAGES) come before schema validation, which then
 * answers 400 INVALID_REQUEST naming the field (ranges of temperature, top_p,
 * max_tokens, roles, types). Message content is checked here too, before any coercion.
 */
export async function requireModelAndMessages(req: FastifyRequest): Promise<void> {
  const b = req.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) {
    throw new AgwError('INVALID_REQUEST', 'the body must be a JSON object with model and messages', { field: 'body', location: 'body' });
  }
  const { model, messages } = b as { model?: unknown; messages?: unknown };
  if (model === undefined || model === null || model === '') throw new AgwError('MISSING_MODEL', 'model is required');
  if (messages === undefined || messages === null || (Array.isArray(messages) && messages.length === 0)) {
    throw new AgwError('MISSING_MESSAGES', 'messages is required and must hold at least one message');
  }
  if (Array.isArray(messages)) messages.forEach(checkContent);
}

/**
 * Message content is text: a string, or a non-empty array of `{type: 'text', text: string}`
 * parts. Checked here, on the body as parsed, because schema validation coerces types
 * (a number would become a string and be forwarded, and billed).
 */
function checkContent(m: unknown, i: number): void {
  if (!m || typeof m !== 'object' || Array.isArray(m)) return; // the schema names it
  const c = (m as { content?: unknown }).content;
  if (typeof c === 'string' || (Array.isArray(c) && c.length > 0 && c.every(isTextPart))) return;
  const field = `messages[${i}].content`;
  throw new AgwError('INVALID_REQUEST', `${field} must be a string or a non-empty array of text parts ({"type":"text","text":"…"})`, {
    field,
    location: 'body',
  });
}

function isTextPart(p: unknown): boolean {
  return !!p && typeof p === 'object' && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string';
}
