import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { errorResponses } from '../../shared/schemas/common.js';
import { CreatedKeyWithSecret, CreateKeyWithLimitsBody, Key, KeyParams, Keys, PatchKeyBody } from '../../shared/schemas/keys.js';
import { ACCOUNT_CREDENTIALS, requireAuth, userOf } from '../auth/principal.js';
import { createKey, listKeys, revokeKey, updateKey, type KeyCaller } from '../keys/service.js';
import type { RouteOptions } from './index.js';

/**
 * CONTRACT "Keys with limits": the caller's keys over HTTP, with an agw_ key, an OAuth
 * token or the portal session. A limited key sees and manages only itself and the keys
 * made with it, and cannot give any key more than it has (keys/service.ts).
 */
const keys: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const auth = requireAuth(ctx, ACCOUNT_CREDENTIALS);
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];
  const tags = ['keys'];
  const callerOf = (req: FastifyRequest): KeyCaller => {
    const u = userOf(req);
    return { userId: u.userId, keyId: u.kind === 'key' ? u.keyId : null };
  };

  app.get(
    '/keys',
    {
      preHandler: auth,
      schema: { tags, summary: 'Your API keys with their limits and what each spent (never the secrets)', security, response: { 200: Keys, ...errorResponses(401, 403) } },
    },
    async (req) => {
      const c = callerOf(req);
      return { items: await listKeys(ctx.db, c.userId, c) };
    },
  );

  app.post(
    '/keys',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Create a key, optionally with limits: the answer holds the secret, shown this once',
        security,
        body: CreateKeyWithLimitsBody,
        response: { 200: CreatedKeyWithSecret, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const c = callerOf(req);
      return createKey(ctx.db, ctx.config, c.userId, req.body, c);
    },
  );

  app.patch(
    '/keys/:id',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Rename a key or change its limits (a field left out stays, null lifts a limit)',
        security,
        params: KeyParams,
        body: PatchKeyBody,
        response: { 200: Key, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => updateKey(ctx.db, ctx.config, req.params.id, req.body, callerOf(req)),
  );

  app.delete(
    '/keys/:id',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Revoke a key and every key made with it (idempotent)',
        security,
        params: KeyParams,
        response: { 200: Key, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => revokeKey(ctx.db, req.params.id, callerOf(req)),
  );
};

export default keys;
