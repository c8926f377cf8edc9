import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AgwError, CONFIGURATION_ERRORS, type ErrorBody, type ErrorCode } from '../shared/errors.js';
import type { RouteIndex } from './route-conventions.js';
import { isStoreUnavailable } from './store/errors.js';
import { errorPage, sendNotFoundPage, wantsHtmlNotFound } from './web/error-page.js';
import { sendPage } from './web/layout.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Error codes for body fields that fail validation, e.g. {model: 'MISSING_MODEL'}. */
    validationCodes?: Record<string, ErrorCode>;
  }
}

interface ValidationItem {
  instancePath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
}

function fieldOf(v: ValidationItem): string {
  const base = (v.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
  const extra =
    v.keyword === 'required'
      ? String(v.params?.missingProperty ?? '')
      : v.keyword === 'additionalProperties'
        ? String(v.params?.additionalProperty ?? '')
        : '';
  return [base, extra].filter(Boolean).join('.');
}

function validationError(err: FastifyError, req: FastifyRequest): AgwError {
  const items = (err.validation ?? []) as ValidationItem[];
  const where = err.validationContext ?? 'body';
  const codes = req.routeOptions.config?.validationCodes ?? {};
  for (const v of items) {
    const top = fieldOf(v).split('.')[0];
    if (codes[top]) return new AgwError(codes[top], `${top} is required and must be valid: ${v.message ?? ''}`.trim());
  }
  const first = items[0];
  const field = first ? fieldOf(first) : '';
  const what =
    first?.keyword === 'additionalProperties'
      ? 'is not allowed'
      : first?.keyword === 'required'
        ? 'is required'
        : (first?.message ?? 'is invalid');
  return new AgwError('INVALID_REQUEST', `${where}${field ? `.${field}` : ''} ${what}`, {
    field: field || where,
    location: where,
  });
}

/** Maps any error to the spec's Error body. Stacks never reach a response. */
export function toAgwError(err: unknown, req: FastifyRequest): AgwError {
  if (err instanceof AgwError) return err;
  const e = err as FastifyError;
  if (e?.validation) return validationError(e, req);
  switch (e?.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AgwError('INVALID_JSON', 'the request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return new AgwError('PAYLOAD_TOO_LARGE', 'the request body is too large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AgwError('UNSUPPORTED_MEDIA_TYPE', 'unsupported Content-Type for this endpoint');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AgwError('INVALID_REQUEST', 'Content-Length does not match the body');
    case 'FST_ERR_BAD_URL':
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AgwError('INVALID_REQUEST', 'the request path is not a valid URL or a path parameter is too long');
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new AgwError('UNSUPPORTED_MEDIA_TYPE', 'expected multipart/form-data');
  }
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) {
    return new AgwError(
      e.statusCode === 404 ? 'NOT_FOUND' : e.statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : e.statusCode === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : e.statusCode === 429 ? 'RATE_LIMITED' : 'INVALID_REQUEST',
      e.message || 'bad request',
    );
  }
  if (isStoreUnavailable(err)) {
    return new AgwError('STORE_UNAVAILABLE', 'the store is unreachable right now; retry shortly', undefined, { 'retry-after': '1' });
  }
  return new AgwError('INTERNAL_ERROR', 'internal error');
}

/** Configuration errors already logged, per HTTP server (one daemon): each is said once. */
const told = new WeakMap<object, Set<string>>();

/**
 * Logs a failed request: a fault (5xx) at error with its stack; the operator's
 * configuration (CONFIGURATION_ERRORS: a provider without a key) once per daemon and
 * message, at warn, without a stack: it is not a fault, and it answers the same until fixed.
 */
function logFailure(err: unknown, e: AgwError, req: FastifyRequest): void {
  if (CONFIGURATION_ERRORS.has(e.code)) {
    let seen = told.get(req.server.server);
    if (!seen) told.set(req.server.server, (seen = new Set()));
    if (seen.has(e.message)) return;
    seen.add(e.message);
    req.log.warn({ code: e.code }, `${e.message} (said once; calls that need it answer ${e.status} ${e.code} until then)`);
    return;
  }
  if (e.status >= 500) req.log.error({ err }, 'request failed');
}

/** Renders any error as the Error body (also fastify's `frameworkErrors` option: bad URLs). */
export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const e = toAgwError(err, req);
  logFailure(err, e, req);
  if (reply.sent || reply.raw.headersSent) {
    reply.raw.destroy();
    return;
  }
  if (e.headers) reply.headers(e.headers);
  const body: ErrorBody = e.toBody();
  reply.status(e.status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

/**
 * fastify's `frameworkErrors` (a URL it cannot route: malformed, or a path parameter over
 * the length limit): the Error body, or for a browser's page request outside /api the
 * same status as an HTML page.
 */
export function sendFrameworkError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  if (!wantsHtmlNotFound(req)) return sendError(err, req, reply);
  const e = toAgwError(err, req);
  sendPage(reply, errorPage({ status: e.status, title: 'Page not found', message: 'There is no page at this address.', code: e.code }), e.status);
}

/** Another shape of the Error body for some requests (the compatible base URLs: gateway/compat-errors.ts). */
export type ErrorShapeFor = (req: FastifyRequest) => ((b: ErrorBody, status: number) => unknown) | undefined;

/**
 * One error format everywhere: thrown errors, validation, unknown routes (404, or 405
 * with Allow when the path exists for other methods). A browser's GET of an unknown path
 * outside /api gets the portal's HTML 404 page instead; a path `shapeFor` names (the
 * compatible base URLs) gets its 404 and 405 in the imitated API's shape.
 */
export function installErrorHandling(app: FastifyInstance, routes: RouteIndex, shapeFor?: ErrorShapeFor): void {
  app.setErrorHandler(sendError);
  const send = (e: AgwError, req: FastifyRequest, reply: FastifyReply) => {
    const shape = shapeFor?.(req);
    if (!shape) return sendError(e, req, reply);
    reply.status(e.status).type('application/json; charset=utf-8').send(JSON.stringify(shape(e.toBody(), e.status)));
  };
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0];
    const methods = routes.methodsFor(path);
    if (methods.length) {
      reply.header('allow', methods.join(', '));
      send(new AgwError('METHOD_NOT_ALLOWED', `${req.method} is not allowed on ${path}: use ${methods.join(', ')}`), req, reply);
      return;
    }
    if (wantsHtmlNotFound(req)) {
      sendNotFoundPage(reply);
      return;
    }
    send(new AgwError('NOT_FOUND', `no route for ${req.method} ${path}`), req, reply);
  });
}

/**
 * Requests node's HTTP parser rejects (malformed, header too large, timed out) never
 * reach a route: answer them with the Error body too, then close the connection.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, code, message] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', 'the request headers are too large']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'the request took too long to arrive']
        : [400, 'INVALID_REQUEST', 'malformed HTTP request'];
  const body = JSON.stringify({ error: message, code } satisfies ErrorBody);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
