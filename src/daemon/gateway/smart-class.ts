import type { FastifyRequest } from 'fastify';
import { SMART_ROUTE_CLASSES } from '../../shared/config/defaults.js';
import { didYouMean, didYouMeanText } from '../../shared/did-you-mean.js';
import { AgwError } from '../../shared/errors.js';

/**
 * preValidation of the smart route: a model that is not a class is 400 INVALID_REQUEST
 * naming the classes (and the closest one), instead of the schema's terse "must be equal
 * to constant".
 */
export function requireSmartClass(req: FastifyRequest, _reply: unknown, done: (err?: Error) => void): void {
  checkSmartClass(req.body);
  done();
}

function checkSmartClass(body: unknown): void {
  const model = (body as { model?: unknown }).model;
  if (typeof model === 'string' && (SMART_ROUTE_CLASSES as readonly string[]).includes(model)) return;
  const named = typeof model === 'string' ? `"${model.slice(0, 100)}"` : 'model';
  const near = typeof model === 'string' ? didYouMean(model, SMART_ROUTE_CLASSES) : [];
  throw new AgwError(
    'INVALID_REQUEST',
    `${named} is not a smart-route class: use ${SMART_ROUTE_CLASSES.join(', ')}.${didYouMeanText(near)} (GET /api/external/smart/v1/models lists them)`,
    { field: 'model', location: 'body', classes: [...SMART_ROUTE_CLASSES], ...(near.length ? { suggestions: near } : {}) },
  );
}
