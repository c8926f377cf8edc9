import type { FastifyReply, FastifyRequest } from 'fastify';
import { toAgwError } from '../errors.js';
import { errorPage } from './error-page.js';
import { sendPage } from './layout.js';
import { loginPath } from './next.js';

/**
 * The error handler of the page routes (set per plugin): what went wrong as a page with
 * the status and code the API would answer; a signed-out form post goes to the login
 * page and back to `back`.
 */
export function htmlErrorHandler(back: string) {
  return (err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const e = toAgwError(err, req);
    if (e.status >= 500) req.log.error({ err }, 'page failed');
    if (e.headers) reply.headers(e.headers);
    if (e.status === 401) return reply.redirect(loginPath(back), 303);
    const title = e.status === 404 ? 'Not found' : e.status === 403 ? 'Not allowed' : e.status >= 500 ? 'Something went wrong' : 'That did not work';
    return sendPage(reply, errorPage({ status: e.status, title, message: e.message, code: e.code }), e.status);
  };
}
