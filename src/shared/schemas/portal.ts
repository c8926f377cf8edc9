import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';

/** The portal's session, key and project endpoints (spend shapes: portal-spend.ts). */

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 320 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
    next: Type.Optional(Type.String({ maxLength: 2048, description: 'HTML form posts only: same-origin path to go to after login' })),
  },
  { additionalProperties: false },
);
export type LoginBodyT = Static<typeof LoginBody>;

export const LoginResult = Type.Object({ userId: Type.String() }, { title: 'PortalLogin' });

export const LogoutResult = Type.Object({ loggedOut: Type.Literal(true) }, { title: 'PortalLogout' });

export const PortalMe = Type.Object(
  {
    userId: Type.String(),
    email: Type.String(),
    tier: Type.String(),
    csrfToken: Type.String({
      description:
        'The session’s token, for clients that send x-csrf-token; not required: cross-site requests are refused by their Sec-Fetch-Site / Origin headers',
    }),
  },
  { title: 'PortalMe' },
);

/** `GET /api/account`: who the credentials on the request belong to (agw addition; `agw whoami`). */
export const AccountMe = Type.Object(
  {
    userId: Type.String(),
    email: Type.Union([Type.String(), Type.Null()], { description: 'null for an OAuth token without the email scope' }),
    tier: Type.String(),
    credential: Type.Object({
      kind: Type.Union([Type.Literal('key'), Type.Literal('oauth'), Type.Literal('session')]),
      keyId: Type.Optional(Type.String()),
      limited: Type.Optional(Type.Boolean({ description: 'a key with limits or an expiry' })),
      clientId: Type.Optional(Type.String({ description: 'the OAuth client the token was issued to' })),
    }),
  },
  { title: 'AccountMe' },
);

export const PortalKey = Type.Object(
  {
    id: Type.String(),
    name: Type.Union([Type.String(), Type.Null()]),
    prefix: Type.String({ description: 'The key’s public start, e.g. agw_3f9a1c0b2d4e…' }),
    createdAt: DateTime(),
    lastUsedAt: Type.Union([DateTime(), Type.Null()]),
    revokedAt: Type.Union([DateTime(), Type.Null()]),
  },
  { title: 'PortalKey' },
);
export const PortalKeys = Type.Object({ items: Type.Array(PortalKey) }, { title: 'PortalKeys' });

export const CreateKeyBody = Type.Object(
  { name: Type.Optional(Type.String({ maxLength: 100 })) },
  { additionalProperties: false },
);
export const CreatedKey = Type.Object(
  {
    id: Type.String(),
    key: Type.String({ description: 'The secret key: shown once, stored hashed' }),
    name: Type.Union([Type.String(), Type.Null()]),
    prefix: Type.String(),
    createdAt: DateTime(),
  },
  { title: 'PortalCreatedKey' },
);
export const KeyIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });
export const RevokedKey = Type.Object({ id: Type.String(), revoked: Type.Literal(true) }, { title: 'PortalRevokedKey' });

export const PortalProject = Type.Object(
  { uid: Type.String(), name: Type.String(), role: Type.String(), createdAt: DateTime() },
  { title: 'PortalProject' },
);

export const PortalProjects = Type.Object({ items: Type.Array(PortalProject) }, { title: 'PortalProjects' });

/** A new project (JSON or the dashboard's form; `_csrf` comes with the form). */
export const CreateProjectBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S', description: 'The project\'s name (not only blanks)' }),
    _csrf: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

const Band = Type.Union([Type.Literal('lite'), Type.Literal('standard'), Type.Literal('pro'), Type.Literal('premium')]);
const Quota = Type.Object({
  used: Type.Integer(),
  limit: Type.Integer({ description: '-1 = no cap' }),
  remaining: Type.Integer(),
  unlimited: Type.Boolean(),
});

export const PortalEntitlements = Type.Object(
  {
    userId: Type.String(),
    tier: Type.String(),
    tierDisplayName: Type.String(),
    capabilities: Type.Array(Type.String()),
    modelBands: Type.Array(Band),
    period: Type.Object({ start: DateTime(), end: DateTime(), resetsAt: DateTime() }),
    quotas: Type.Record(Type.String(), Quota),
    allowedModels: Type.Array(
      Type.Object({
        provider: Type.String(),
        model: Type.String(),
        band: Band,
        unifiedChat: Type.Boolean({ description: 'true: POST /api/gateway/chat serves it; false: reached through the proxy, /api/external/{provider}/…' }),
        providerHasKey: Type.Boolean({ description: 'false: no API key for this provider on this service, calls are refused' }),
      }),
    ),
    unifiedChatProviders: Type.Array(Type.String(), { description: 'the providers unified chat serves' }),
    aliases: Type.Array(Type.Object({ alias: Type.String(), provider: Type.String(), modelId: Type.String() })),
  },
  { title: 'PortalEntitlements' },
);
export type PortalEntitlementsT = Static<typeof PortalEntitlements>;
