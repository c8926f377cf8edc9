import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import formbody from '@fastify/formbody';
import { Type } from 'typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { AuthorizeQuery, ConsentBody } from '../../shared/schemas/oauth.js';
import { readCookie, requireAuth, type Principal } from '../auth/principal.js';
import { lookupSession, SESSION_COOKIE } from '../auth/sessions.js';
import type { AppContext } from '../context/index.js';
import { userById } from '../store/users.js';
import { loginPath } from '../web/next.js';
import { checkClient, checkRequest, pickParams, redirectTo, type AuthorizeParams, type RedirectError, type ValidRequest } from '../oauth/authorize.js';
import { issueCode } from '../oauth/codes.js';
import { sendConsentPage, sendErrorPage } from '../oauth/pages.js';
import { initOAuth, tokenService } from '../oauth/service.js';
import type { RouteOptions } from './index.js';

/**
 * The authorization endpoint (code grant, PKCE S256 only) and its consent form. Sets up
 * OAuth at start: signing key, the built-in `agw-cli` client, gateway token verification.
 */
const oauth: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  await initOAuth(ctx);
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  app.get(
    '/oauth/authorize',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Authorization endpoint: code grant with PKCE S256',
        description:
          'Without a portal session: 302 to the portal login (`/login?next=…`) and back. Trusted client with a session: 302 to redirect_uri with code, state and iss. Untrusted client: an HTML consent page. An unknown client or an unregistered redirect_uri is shown (HTML for browsers, else the Error body), never redirected.',
        querystring: AuthorizeQuery,
        response: {
          200: Type.String({ description: 'HTML consent page' }),
          302: Type.Null({ description: 'to redirect_uri (code or error) or to the portal login' }),
          ...errorResponses(400),
        },
      },
    },
    async (req, reply) => {
      const p = pickParams(req.query);
      const valid = await validate(ctx, req, reply, p);
      if (!valid) return reply;
      const sid = readCookie(req, SESSION_COOKIE);
      const session = sid ? await lookupSession(ctx, sid) : null;
      const prompts = (p.prompt ?? '').split(' ');
      if (!session || session.kind !== 'session') {
        if (prompts.includes('none')) return back(ctx, reply, valid, { error: 'login_required', description: 'no portal session' });
        return reply.header('cache-control', 'no-store').redirect(loginPath(req.url), 302);
      }
      if (!valid.client.trusted || prompts.includes('consent')) {
        if (prompts.includes('none')) return back(ctx, reply, valid, { error: 'consent_required', description: 'the user has not approved this client' });
        const user = await userById(ctx.db, session.userId);
        return sendConsentPage(reply, {
          client: valid.client,
          redirectUri: valid.redirectUri,
          scope: valid.scope,
          params: p,
          csrfToken: session.csrfToken,
          action: `${req.url.split('?')[0].replace(/\/authorize$/, '/consent')}`,
          email: user?.email ?? session.userId,
        });
      }
      return grant(ctx, reply, valid, session, 302);
    },
  );

  app.post(
    '/oauth/consent',
    {
      preHandler: requireAuth(ctx, ['session']),
      schema: {
        tags: ['oauth'],
        summary: 'The consent form’s answer (session cookie and _csrf required)',
        consumes: ['application/x-www-form-urlencoded'],
        body: ConsentBody,
        security: [{ session: [] }],
        response: { 303: Type.Null({ description: 'to redirect_uri with code, or error=access_denied' }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const p = pickParams(req.body);
      const valid = await validate(ctx, req, reply, p);
      if (!valid) return reply;
      if (req.body.decision !== 'approve') return back(ctx, reply, valid, { error: 'access_denied', description: 'the user denied the request' }, 303);
      return grant(ctx, reply, valid, req.principal as Principal, 303);
    },
  );
};

/** Validates client and redirect (shown to the user) and then the request (redirected). */
async function validate(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, p: AuthorizeParams): Promise<ValidRequest | null> {
  let base;
  try {
    base = await checkClient(ctx.db, p);
  } catch (e) {
    if (!(e instanceof AgwError) || !(req.headers.accept ?? '').includes('text/html')) throw e;
    sendErrorPage(reply, e.status, e.code, e.message);
    return null;
  }
  const r = checkRequest(base, p);
  if (r.ok) return r.req;
  back(ctx, reply, { redirectUri: base.redirectUri, state: p.state }, r.err, req.method === 'POST' ? 303 : 302);
  return null;
}

/** An RFC 6749 §4.1.2.1 error on the client's redirect URI, with state and iss (RFC 9207). */
function back(
  ctx: AppContext,
  reply: FastifyReply,
  v: Pick<ValidRequest, 'redirectUri' | 'state'>,
  err: RedirectError,
  status: 302 | 303 = 302,
): FastifyReply {
  const iss = tokenService(ctx).issuer();
  const to = redirectTo(v.redirectUri, { error: err.error, error_description: err.description, state: v.state, iss });
  return reply.header('cache-control', 'no-store').redirect(to, status);
}

async function grant(ctx: AppContext, reply: FastifyReply, v: ValidRequest, who: Principal, status: 302 | 303): Promise<FastifyReply> {
  if (who.kind !== 'session') throw new AgwError('UNAUTHORIZED', 'a portal session is required');
  const code = await issueCode(ctx.db, {
    clientId: v.client.clientId,
    userId: who.userId,
    redirectUri: v.redirectUri,
    codeChallenge: v.codeChallenge,
    scope: v.scope,
    nonce: v.nonce,
  });
  const to = redirectTo(v.redirectUri, { code, state: v.state, iss: tokenService(ctx).issuer() });
  return reply.header('cache-control', 'no-store').redirect(to, status);
}

export default oauth;
