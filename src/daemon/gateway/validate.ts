import type { FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';

/**
 * preValidation for chat bodies: the spec's own codes for an absent model or messages
 * (400 MISSING_MODEL / MISSING_MESSAGES) come before schema validation, which then
 * answers 400 INVALID_REQUEST naming the field (ranges of temperature, top_p,
 * max_tokens, roles, types).
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
}
