import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';

/**
 * preValidation for Messages API bodies (POST /gateway/v1/messages and its count_tokens):
 * 400 MISSING_MODEL / MISSING_MESSAGES first, as unified chat answers them; then each
 * message's content, on the body as parsed (schema validation coerces types): a string, or
 * content blocks, each an object with a string `type`.
 */
export async function requireMessagesBody(req: FastifyRequest): Promise<void> {
  const b = req.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) {
    throw new AgwError('INVALID_REQUEST', 'the body must be a JSON object with model and messages', { field: 'body', location: 'body' });
  }
  const { model, messages } = b as { model?: unknown; messages?: unknown };
  if (model === undefined || model === null || model === '') throw new AgwError('MISSING_MODEL', 'model is required');
  if (messages === undefined || messages === null || (Array.isArray(messages) && messages.length === 0)) {
    throw new AgwError('MISSING_MESSAGES', 'messages is required and must hold at least one message');
  }
  if (!Array.isArray(messages)) return; // the schema names it
  messages.forEach((m: unknown, i) => {
    if (!m || typeof m !== 'object') return;
    const c = (m as { content?: unknown }).content;
    if (typeof c === 'string') return;
    const field = `messages[${i}].content`;
    const ok = Array.isArray(c) && c.every((x) => !!x && typeof x === 'object' && typeof (x as { type?: unknown }).type === 'string');
    if (!ok) throw new AgwError('INVALID_REQUEST', `${field} must be a string or an array of content blocks ({"type":…})`, { field, location: 'body' });
  });
}
