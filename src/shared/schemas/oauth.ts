import { Type } from 'typebox';

/** OAuth 2.0 / OpenID Connect shapes (RFC 6749, RFC 7517, OIDC Core and Discovery). */

const Str = (description: string) => Type.Optional(Type.String({ description }));

const authorizeFields = {
  response_type: Str('must be code'),
  client_id: Str('a registered client id (the CLI uses agw-cli)'),
  redirect_uri: Str('a registered redirect URI (loopback IP URIs match on any port, RFC 8252 §7.3)'),
  scope: Str('space-separated: openid profile email tier (default openid)'),
  state: Str('returned unchanged on the redirect'),
  nonce: Str('copied into the ID token'),
  code_challenge: Str('PKCE: BASE64URL(SHA256(code_verifier))'),
  code_challenge_method: Str('must be S256'),
  prompt: Str('none or consent'),
};

export const AuthorizeQuery = Type.Object(authorizeFields, { additionalProperties: true });

export const ConsentBody = Type.Object(
  { ...authorizeFields, decision: Str('approve or deny'), _csrf: Str('sent by the consent page; not checked: a cross-site post is refused by its Sec-Fetch-Site / Origin headers') },
  { additionalProperties: true },
);

export const TokenBody = Type.Object(
  {
    grant_type: Str('authorization_code or refresh_token'),
    client_id: Str('the public client id'),
    code: Str('authorization_code: the code from the redirect'),
    redirect_uri: Str('authorization_code: the redirect URI of the authorization request'),
    code_verifier: Str('authorization_code: the PKCE verifier'),
    refresh_token: Str('refresh_token: the current refresh token (rotated on use)'),
    scope: Str('refresh_token: optionally narrow the scope'),
  },
  { additionalProperties: true },
);

export const TokenResponse = Type.Object(
  {
    access_token: Type.String({ description: 'RS256 JWT, valid 900 s' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    refresh_token: Type.String({ description: 'single use: every refresh returns a new one' }),
    scope: Type.String(),
    id_token: Type.Optional(Type.String({ description: 'when openid was granted (code exchange only)' })),
  },
  { title: 'TokenResponse' },
);

export const OAuthErrorBody = Type.Object(
  {
    error: Type.Union([
      Type.Literal('invalid_request'),
      Type.Literal('invalid_client'),
      Type.Literal('invalid_grant'),
      Type.Literal('unsupported_grant_type'),
      Type.Literal('invalid_scope'),
    ]),
    error_description: Type.String(),
  },
  { title: 'OAuthError', description: 'RFC 6749 §5.2 error (token endpoint only)' },
);

export const Jwks = Type.Object(
  { keys: Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'RSA public keys (kty, n, e, kid, alg, use)' }) },
  { title: 'JWKS' },
);

export const UserInfo = Type.Object(
  {
    sub: Type.String(),
    preferred_username: Type.Optional(Type.String({ description: 'scope profile' })),
    name: Type.Optional(Type.String({ description: 'scope profile' })),
    email: Type.Optional(Type.String({ description: 'scope email' })),
    tier: Type.Optional(Type.String({ description: 'scope tier' })),
  },
  { title: 'UserInfo' },
);

export const Discovery = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    userinfo_endpoint: Type.String(),
    jwks_uri: Type.String(),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    subject_types_supported: Type.Array(Type.String()),
    id_token_signing_alg_values_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    claims_supported: Type.Array(Type.String()),
    authorization_response_iss_parameter_supported: Type.Boolean(),
  },
  { title: 'OpenIDConfiguration' },
);
