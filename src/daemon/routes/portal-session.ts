import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import formbody from '@fastify/formbody';
import { errorResponses } from '../../shared/schemas/common.js';
import { LoginBody, LoginResult, LogoutResult, PortalMe } from '../../shared/schemas/portal.js';
import { AgwError } from '../../shared/errors.js';
import { refuseCrossSite } from '../auth/cross-site.js';
import { readCookie, requireAuth, userOf } from '../auth/principal.js';
import { hashPassword, verifyPassword } from '../auth/password.js';
import { createSession, deleteSession, lookupSession, SESSION_COOKIE } from '../auth/sessions.js';
import { userByEmail, userById } from '../store/users.js';
import { beginAttempt, forgetAttempt, LOGIN_THROTTLE, pruneAttempts, scopeKey } from '../store/login-attempts.js';
import { clearSessionCookie, setSessionCookie } from '../web/session-cookie.js';
import { safeNext } from '../web/next.js';
import { loginFormActions } from '../oauth/login-return.js';
import { sendPage } from '../web/layout.js';
import { loginPage } from '../web/login-page.js';
import type { RouteOptions } from './index.js';

/** A browser's HTML form post: answer with redirects and pages instead of JSON. */
function isHtmlForm(req: FastifyRequest): boolean {
  const type = req.headers['content-type'] ?? '';
  return type.startsWith('application/x-www-form-urlencoded') && (req.headers.accept ?? '').includes('text/html');
}

/**
 * The contract's portal session: login (JSON or form), logout and me. Login is
 * throttled per account and per client address (store-backed, see login-attempts.ts);
 * unknown emails cost the same scrypt work as wrong passwords and get the same answer.
 */
const portalSession: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  let dummyHash: Promise<string> | undefined;
  let lastPrune = 0;

  async function checkCredentials(email: string, password: string, address: string): Promise<string> {
    const account = scopeKey('account', email);
    const now = Date.now();
    const ticket = await ctx.db.tx(async (q) => {
      if (now - lastPrune > 60_000) {
        lastPrune = now;
        await pruneAttempts(q, now);
      }
      return beginAttempt(q, [
        { key: account, rule: LOGIN_THROTTLE.account },
        { key: scopeKey('address', address), rule: LOGIN_THROTTLE.address },
      ], now);
    });
    if (!ticket.ok) {
      throw new AgwError(
        'TOO_MANY_ATTEMPTS',
        `too many failed sign-in attempts: try again in ${ticket.retryAfterSec} s`,
        { retryAfter: ticket.retryAfterSec },
        { 'retry-after': String(ticket.retryAfterSec) },
      );
    }
    const user = await userByEmail(ctx.db, email.trim());
    const stored = user?.password_hash ?? (await (dummyHash ??= hashPassword(randomBytes(16).toString('hex'))));
    const ok = await verifyPassword(password, stored);
    if (!user?.password_hash || !ok) throw new AgwError('INVALID_CREDENTIALS', 'wrong email or password');
    await ctx.db.tx((q) => forgetAttempt(q, ticket.ids, account));
    return user.id;
  }

  app.post(
    '/portal/login',
    {
      schema: {
        tags: ['portal'],
        summary: 'Sign in: sets the service_session cookie (JSON or form body)',
        description:
          'Form posts from a browser (Accept: text/html) are answered with a 303 to `next` (a same-origin path) or the login page again. A cross-site sign-in (Sec-Fetch-Site, else Origin) is 403 CSRF_FAILED. Throttled: 5 failures per account and 20 per address in 15 minutes give 429 TOO_MANY_ATTEMPTS with Retry-After.',
        body: LoginBody,
        response: { 200: LoginResult, ...errorResponses(400, 401, 403, 429) },
      },
    },
    async (req, reply) => {
      const html = isHtmlForm(req);
      const next = safeNext(req.body.next);
      // not made with a session, but it makes one: a cross-site sign-in (login CSRF) is refused by the same rule
      refuseCrossSite(ctx, req);
      try {
        const userId = await checkCredentials(req.body.email, req.body.password, req.ip);
        const session = await createSession(ctx, userId);
        await ctx.db.run('DELETE FROM sessions WHERE user_id = ? AND expires_at <= ?', [userId, Date.now()]);
        setSessionCookie(ctx, reply, session.id);
        if (html) return reply.redirect(next, 303);
        return { userId };
      } catch (e) {
        if (!html || !(e instanceof AgwError) || (e.status !== 401 && e.status !== 429)) throw e;
        if (e.headers) reply.headers(e.headers);
        // the form shown again must still be able to return to an OAuth client (see loginFormActions)
        return sendPage(reply, loginPage({ next, error: e.message, email: req.body.email }), e.status, { formActions: await loginFormActions(ctx.db, next) });
      }
    },
  );

  app.post(
    '/portal/logout',
    {
      schema: {
        tags: ['portal'],
        summary: 'Sign out: ends the session and expires the cookie',
        description: 'With a live session a cross-site request (Sec-Fetch-Site, else Origin) is refused with 403 CSRF_FAILED; a client sending neither header (curl) needs no token.',
        response: { 200: LogoutResult, ...errorResponses(403) },
      },
    },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const sid = readCookie(req, SESSION_COOKIE);
      const session = sid ? await lookupSession(ctx, sid) : null;
      if (sid && session?.kind === 'session') {
        refuseCrossSite(ctx, req);
        await deleteSession(ctx, sid);
      }
      clearSessionCookie(ctx, reply);
      if (isHtmlForm(req)) return reply.redirect('/login', 303);
      return { loggedOut: true as const };
    },
  );

  app.get(
    '/portal/me',
    {
      preHandler: requireAuth(ctx, ['session']),
      schema: {
        tags: ['portal'],
        summary: 'The signed-in user (renews the session cookie)',
        security: [{ session: [] }],
        response: { 200: PortalMe, ...errorResponses(401) },
      },
    },
    async (req, reply) => {
      const p = userOf(req);
      const user = await userById(ctx.db, p.userId);
      if (!user || p.kind !== 'session') throw new AgwError('UNAUTHORIZED', 'the session’s user no longer exists');
      setSessionCookie(ctx, reply, readCookie(req, SESSION_COOKIE)!);
      return { userId: user.id, email: user.email, tier: p.tier, csrfToken: p.csrfToken };
    },
  );
};

export default portalSession;
