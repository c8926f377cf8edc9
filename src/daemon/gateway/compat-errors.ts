import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '../../shared/errors.js';

/**
 * Errors on the two compatible base URLs in the error object of the API they imitate, so
 * the official SDKs show agw's message: an onSend hook (registered in those routes' own
 * scope) that reshapes the Error body agw renders everywhere (code and status kept).
 */
export type Shape = (b: ErrorBody, status: number) => unknown;

const OPENAI_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'insufficient_quota',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'invalid_request_error',
  413: 'invalid_request_error',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
};

const ANTHROPIC_TYPE: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  503: 'overloaded_error',
};

const param = (b: ErrorBody): string | null => {
  const d = b.details ?? {};
  const p = d.field ?? d.parameter;
  return typeof p === 'string' ? p : null;
};

/** {"error":{"message","type","code","param"}} (https://platform.openai.com/docs/guides/error-codes) */
export const openAiError: Shape = (b, status) => ({
  error: { message: b.error, type: OPENAI_TYPE[status] ?? 'api_error', code: b.code ?? null, param: param(b), ...(b.details && { details: b.details }) },
});

/** {"type":"error","error":{"type","message"}} plus error.code (https://docs.claude.com/en/api/errors) */
export const anthropicError: Shape = (b, status) => ({
  type: 'error',
  error: { type: ANTHROPIC_TYPE[status] ?? 'api_error', message: b.error, ...(b.code && { code: b.code }), ...(b.details && { details: b.details }) },
});

/** An error answer's body (agw's Error body as a string) in `shape`; anything else unchanged. */
export function reshapeError(shape: Shape, status: number, payload: string): string {
  let b: ErrorBody;
  try {
    b = JSON.parse(payload) as ErrorBody;
  } catch {
    return payload;
  }
  if (!b || typeof b.error !== 'string') return payload;
  return JSON.stringify(shape(b, status));
}

/** The onSend hook of a compatible base URL's routes (the fast lane's reply applies `reshapeError` itself). */
export function reshapeErrors(shape: Shape) {
  return function compatErrors(_req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void): void {
    if (reply.statusCode < 400 || typeof payload !== 'string') return done(null, payload);
    done(null, reshapeError(shape, reply.statusCode, payload));
  };
}

/**
 * The shape of the answers no route gives (404, 405) under the base URLs' common prefix
 * /api/gateway/v1: Anthropic's under /api/gateway/v1/messages and for a request an
 * Anthropic client sent (`anthropic-version`), OpenAI's elsewhere there; none (the spec's
 * Error body) on any other path. The routes' own errors get theirs from `reshapeErrors`.
 */
export function compatShapeFor(req: FastifyRequest): Shape | undefined {
  const url = req.url;
  if (!url.startsWith('/api/gateway/v1/') && url !== '/api/gateway/v1' && !url.startsWith('/api/gateway/v1?')) return undefined;
  return url.startsWith('/api/gateway/v1/messages') || req.headers['anthropic-version'] !== undefined ? anthropicError : openAiError;
}
