import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Discovery } from '../../shared/schemas/oauth.js';
import { SCOPES } from '../oauth/authorize.js';
import { tokenService } from '../oauth/service.js';
import type { RouteOptions } from './index.js';

/** OIDC discovery at the root: `{root_url}/.well-known/openid-configuration`. */
const oauthDiscovery: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/.well-known/openid-configuration',
    { schema: { tags: ['oauth'], summary: 'OpenID Connect discovery document', response: { 200: Discovery } } },
    async (_req, reply) => {
      const issuer = tokenService(ctx).issuer();
      const api = `${issuer}/api/oauth`;
      reply.header('cache-control', 'public, max-age=300');
      return {
        issuer,
        authorization_endpoint: `${api}/authorize`,
        token_endpoint: `${api}/token`,
        userinfo_endpoint: `${api}/userinfo`,
        jwks_uri: `${api}/jwks`,
        scopes_supported: [...SCOPES],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['none'],
        code_challenge_methods_supported: ['S256'],
        claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'nonce', 'preferred_username', 'name', 'email', 'tier'],
        authorization_response_iss_parameter_supported: true,
      };
    },
  );
};

export default oauthDiscovery;
