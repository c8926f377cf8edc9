import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas/common.js';
import { CreatedKey, CreateKeyBody, KeyIdParams, PortalKeys, RevokedKey } from '../../shared/schemas/portal.js';
import { AgwError } from '../../shared/errors.js';
import { lastUsedOf } from '../auth/key-usage.js';
import { requireAuth, userOf } from '../auth/principal.js';
import { iso, keyPrefix } from '../keys/view.js';
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyRow } from '../store/keys.js';
import type { RouteOptions } from './index.js';

/** The portal's key (the spec's PortalKey): when it was revoked rather than its limits. */
function keyView(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    prefix: keyPrefix(k.lookup),
    createdAt: iso(k.created_at)!,
    lastUsedAt: iso(lastUsedOf(k.id, k.last_used_at)), // a use on this daemon shows at once
    revokedAt: iso(k.revoked_at),
  };
}

/** The signed-in user's own API keys: list, create (the secret is shown once), revoke. Session only. */
const portalKeys: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const auth = requireAuth(ctx, ['session']);
  const security = [{ session: [] }];

  app.get(
    '/portal/keys',
    { preHandler: auth, schema: { tags: ['portal'], summary: 'Your API keys (never the secrets)', security, response: { 200: PortalKeys, ...errorResponses(401) } } },
    async (req) => ({ items: (await listApiKeys(ctx.db, userOf(req).userId)).map(keyView) }),
  );

  app.post(
    '/portal/keys',
    {
      preHandler: auth,
      schema: {
        tags: ['portal'],
        summary: 'Create an API key: the answer holds the secret, shown this once',
        security,
        body: CreateKeyBody,
        response: { 201: CreatedKey, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const u = userOf(req);
      const name = req.body.name?.trim() || null;
      const { key, row } = await ctx.db.tx(async (q) => {
        const k = await createApiKey(q, u.userId, name);
        return { key: k.key, row: (await q.get<ApiKeyRow>('SELECT * FROM api_keys WHERE id = ?', [k.id]))! };
      });
      const { id, prefix, createdAt } = keyView(row);
      reply.status(201);
      return { id, key, name, prefix, createdAt };
    },
  );

  app.delete(
    '/portal/keys/:id',
    {
      preHandler: auth,
      schema: {
        tags: ['portal'],
        summary: 'Revoke one of your API keys (idempotent)',
        security,
        params: KeyIdParams,
        response: { 200: RevokedKey, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const u = userOf(req);
      const found = await ctx.db.tx(async (q) => {
        const own = await q.get('SELECT id FROM api_keys WHERE id = ? AND user_id = ?', [req.params.id, u.userId]);
        return own ? revokeApiKey(q, req.params.id) : false;
      });
      if (!found) throw new AgwError('KEY_NOT_FOUND', `no key ${req.params.id} of yours`);
      return { id: req.params.id, revoked: true as const };
    },
  );
};

export default portalKeys;
