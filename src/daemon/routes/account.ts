import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { AccountMe } from '../../shared/schemas/portal.js';
import { ACCOUNT_CREDENTIALS, isLimitedKey, requireAuth, userOf } from '../auth/principal.js';
import { userById } from '../store/users.js';
import type { RouteOptions } from './index.js';

/**
 * GET /api/account: who the request's credentials belong to, for `agw whoami` with any
 * login (the spec's /portal/me is the session's). An OAuth token shows the email only
 * with the `email` scope.
 */
const account: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/account',
    {
      preHandler: requireAuth(ctx, ACCOUNT_CREDENTIALS),
      schema: {
        tags: ['portal'],
        summary: 'The account the credentials belong to, and which credential this is',
        security: [{ bearer: [] }, { session: [] }],
        response: { 200: AccountMe, ...errorResponses(401) },
      },
    },
    async (req) => {
      const p = userOf(req);
      const user = await userById(ctx.db, p.userId);
      if (!user) throw new AgwError('UNAUTHORIZED', 'the credentials’ user no longer exists');
      const credential =
        p.kind === 'key'
          ? { kind: 'key' as const, keyId: p.keyId, limited: isLimitedKey(p) }
          : p.kind === 'oauth'
            ? { kind: 'oauth' as const, clientId: p.clientId }
            : { kind: 'session' as const };
      const email = p.kind === 'oauth' && !p.scopes.includes('email') ? null : user.email;
      return { userId: user.id, email, tier: p.tier, credential };
    },
  );
};

export default account;
