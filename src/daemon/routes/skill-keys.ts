import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SkillKeys, type SkillKeysT } from '../../shared/schemas/skills.js';
import { skillJwks } from '../marketplace/trust/keys.js';
import type { RouteOptions } from './index.js';

/**
 * `{root_url}/.well-known/agw-skill-keys.json`: the Ed25519 public keys (JWK, OKP) that
 * verify skill version signatures, the current one first. Public; clients may cache it a
 * few minutes (a key that signed is never removed).
 */
const skillKeys: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/.well-known/agw-skill-keys.json',
    { schema: { tags: ['skills'], summary: 'Public keys that verify skill version signatures', response: { 200: SkillKeys } } },
    async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return { keys: (await skillJwks(ctx.db)) as SkillKeysT['keys'] };
    },
  );
};

export default skillKeys;
