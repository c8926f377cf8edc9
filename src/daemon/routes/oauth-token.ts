import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import formbody from '@fastify/formbody';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { Jwks, OAuthErrorBody, TokenBody, TokenResponse, UserInfo } from '../../shared/schemas/oauth.js';
import { authenticate } from '../auth/principal.js';
import type { AppContext } from '../context/index.js';
import { userById } from '../store/users.js';
import { publicJwks } from '../oauth/keys.js';
import { OAuthError, tokenGrant } from '../oauth/grants.js';
import { userClaims } from '../oauth/service.js';
import type { RouteOptions } from './index.js';

/** Token endpoint (RFC 6749 errors), JWKS and OIDC userinfo. */
const oauthToken: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  if (!app.hasContentTypeParser('application/x-www-form-urlencoded')) await app.register(formbody);

  app.post(
    '/oauth/token',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Token endpoint: authorization_code (with PKCE code_verifier) and refresh_token grants',
        description: 'Form-encoded. Errors use the RFC 6749 body {error, error_description}, with Cache-Control: no-store.',
        consumes: ['application/x-www-form-urlencoded'],
        body: TokenBody,
        response: { 200: TokenResponse, 400: OAuthErrorBody, 401: OAuthErrorBody },
      },
      errorHandler: tokenErrorHandler,
    },
    async (req, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return tokenGrant(ctx, req.body as Record<string, unknown>, basicClientId(req));
    },
  );

  app.get(
    '/oauth/jwks',
    { schema: { tags: ['oauth'], summary: 'JSON Web Key Set: the current and recently retired signing keys', response: { 200: Jwks } } },
    async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=60');
      return { keys: await publicJwks(ctx.db) };
    },
  );

  const userinfo = {
    schema: {
      tags: ['oauth'],
      summary: 'OIDC userinfo: claims by scope (profile: preferred_username, name; email: email; tier: tier)',
      security: [{ bearer: [] }],
      response: { 200: UserInfo, ...errorResponses(401, 403) },
    },
  };
  app.get('/oauth/userinfo', userinfo, (req, reply) => userInfo(ctx, req, reply));
  app.post('/oauth/userinfo', userinfo, (req, reply) => userInfo(ctx, req, reply));
};

async function userInfo(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  const p = await authenticate(ctx, req, ['oauth']);
  if (!p || p.kind !== 'oauth') {
    throw new AgwError('UNAUTHORIZED', 'send a valid OAuth access token: Authorization: Bearer <token>', undefined, {
      'www-authenticate': 'Bearer error="invalid_token"',
    });
  }
  if (!p.scopes.includes('openid')) {
    throw new AgwError('INSUFFICIENT_SCOPE', 'userinfo needs an access token with the openid scope', { scope: 'openid' }, {
      'www-authenticate': 'Bearer error="insufficient_scope", scope="openid"',
    });
  }
  const user = await userById(ctx.db, p.userId);
  if (!user) throw new AgwError('UNAUTHORIZED', 'the account no longer exists');
  reply.header('cache-control', 'no-store');
  return { sub: user.id, ...userClaims(user, p.tier, p.scopes) };
}

/** The client id of an `Authorization: Basic` header (public clients send no secret). */
function basicClientId(req: FastifyRequest): string | undefined {
  const h = req.headers.authorization;
  if (!h || !/^basic /i.test(h)) return undefined;
  const raw = Buffer.from(h.slice(6).trim(), 'base64').toString('utf8');
  const user = raw.split(':')[0];
  try {
    return decodeURIComponent(user.replace(/\+/g, ' ')) || undefined;
  } catch {
    return undefined;
  }
}

/** Every failure at the token endpoint is an RFC 6749 error body, never the Error body. */
function tokenErrorHandler(err: unknown, req: FastifyRequest, reply: FastifyReply) {
  let e: OAuthError;
  if (err instanceof OAuthError) e = err;
  else {
    const status = (err as { statusCode?: number })?.statusCode;
    if (typeof status !== 'number' || status >= 500) throw err; // the app's handler: 500 Error body, logged
    e = new OAuthError('invalid_request', 'the request is not a valid form-encoded token request');
  }
  if (e.status === 401) reply.header('www-authenticate', 'Basic realm="agw"');
  req.log.debug({ error: e.error }, 'token request refused');
  return reply
    .code(e.status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .send({ error: e.error, error_description: e.description });
}

export default oauthToken;
