import { Type, type Static } from 'typebox';
import { KeyEntitlement } from './keys.js';
import { DateTime } from './common.js';
import { Wallet } from './wallet.js';

/** The gateway's request and response shapes (spec: Chat request, Gateway chat request, Entitlements, Aliases). */

const Role = Type.Union([Type.Literal('system'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]);

/** A text part of a multi-part message (what the OpenAI SDK sends for multi-part text). */
export const TextPart = Type.Object(
  { type: Type.Literal('text'), text: Type.String() },
  { title: 'TextPart', additionalProperties: true },
);

export const ChatMessage = Type.Object(
  {
    role: Role,
    // one schema with two types, not a union: Ajv's coercion inside union branches would
    // rewrite a one-part array while trying the string branch
    content: Type.Unsafe<string | Static<typeof TextPart>[]>({
      type: ['string', 'array'],
      items: TextPart,
      minItems: 1,
      description: 'a string, or an array of text parts ({"type":"text","text":"…"}); anything else is 400 INVALID_REQUEST',
    }),
  },
  { title: 'ChatMessage', additionalProperties: true },
);

const chatFields = {
  messages: Type.Array(ChatMessage, { minItems: 1 }),
  stream: Type.Optional(Type.Boolean({ default: false, description: 'true returns text/event-stream' })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
};

export const GatewayChatBody = Type.Object(
  {
    model: Type.String({ minLength: 1, description: 'a concrete model id (or provider/model) or a smart-route alias such as smart-pro' }),
    ...chatFields,
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    stop: Type.Optional(
      Type.Union([Type.String(), Type.Array(Type.String())], { description: 'mapped to stop_sequences for the messages-style provider' }),
    ),
  },
  { title: 'GatewayChatRequest', additionalProperties: true },
);
export type GatewayChatBodyT = Static<typeof GatewayChatBody>;

/** Unified chat's optional request header (an agw addition: docs/contract-additions.md). */
export const GatewayChatHeaders = Type.Object({
  'x-service-response-format': Type.Optional(
    Type.Union([Type.Literal('openai'), Type.Literal('provider')], {
      description:
        'openai: the answer in the common chat shape (JSON and SSE chunks) whichever provider serves the call; provider (the default): the resolved provider’s own shape',
    }),
  ),
});

export const SmartChatBody = Type.Object(
  {
    model: Type.Union([Type.Literal('best-cheap-llm'), Type.Literal('best-fast-llm'), Type.Literal('best-quality-llm')]),
    ...chatFields,
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  },
  { title: 'SmartChatRequest', additionalProperties: true },
);

/** The common models-list shape (`GET /api/external/smart/v1/models`): one row per smart-route class. */
export const SmartModelList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(Type.Object({ id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() })),
  },
  { title: 'SmartModelList' },
);

export const ChatCompletion = Type.Object(
  {
    id: Type.String(),
    object: Type.String(),
    model: Type.String(),
    choices: Type.Array(
      Type.Object({
        index: Type.Integer(),
        message: Type.Object({ role: Type.String(), content: Type.String() }),
        finish_reason: Type.String(),
      }),
    ),
    usage: Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }),
  },
  { title: 'ChatResponse', additionalProperties: true, description: 'the common chat shape; with stream=true an SSE chunk stream instead' },
);

export const ProviderAnswer = Type.Object(
  {},
  { title: 'ProviderAnswer', additionalProperties: true, description: 'the upstream provider’s answer, unchanged (JSON, SSE or binary)' },
);

/** Path parameters of the proxy as the OpenAPI document names them (the route itself uses a wildcard). */
export const ProxyParams = Type.Object({
  provider: Type.String({ description: 'provider id, e.g. openai' }),
  path: Type.String({ description: 'the provider’s own path, e.g. v1/chat/completions (query string passed unchanged)' }),
});

const Band = Type.Union([Type.Literal('lite'), Type.Literal('standard'), Type.Literal('pro'), Type.Literal('premium')]);

const Quota = Type.Object({
  used: Type.Integer(),
  limit: Type.Integer({ description: '-1 = no cap' }),
  remaining: Type.Integer({ description: '-1 when unlimited' }),
  unlimited: Type.Boolean(),
});

export const Entitlements = Type.Object(
  {
    userId: Type.String(),
    tier: Type.String(),
    tierDisplayName: Type.String(),
    capabilities: Type.Array(Type.String()),
    modelBands: Type.Array(Band),
    wallet: Wallet,
    period: Type.Object({ start: DateTime(), end: DateTime(), resetsAt: DateTime() }),
    quotas: Type.Object({
      ai_chat: Quota,
      image_generation: Quota,
      model_3d: Quota,
      tts: Quota,
      skybox: Quota,
      npc_generation: Quota,
      sound_effect: Quota,
    }),
    models: Type.Array(Type.Object({ alias: Type.String(), provider: Type.String(), modelId: Type.String() })),
    cacheTtlSeconds: Type.Integer(),
    key: Type.Optional(KeyEntitlement),
  },
  { title: 'GatewayEntitlements' },
);
export type EntitlementsT = Static<typeof Entitlements>;

export const AliasesResponse = Type.Object(
  {
    tier: Type.String(),
    modelBands: Type.Array(Band),
    aliases: Type.Array(
      Type.Object({
        alias: Type.String(),
        targets: Type.Array(Type.Object({ provider: Type.String(), model: Type.String(), allowed: Type.Boolean() })),
        allowed: Type.Boolean(),
      }),
    ),
    allowedModels: Type.Array(Type.Object({ provider: Type.String(), model: Type.String(), band: Band }), {
      description: 'models of the tier that unified chat (POST /api/gateway/chat) serves',
    }),
    smartRouteProviderOrder: Type.Array(Type.String()),
    unifiedChatProviders: Type.Array(Type.String(), { description: 'agw addition: the providers unified chat serves' }),
    proxyModels: Type.Array(
      Type.Object({
        provider: Type.String(),
        model: Type.String(),
        band: Band,
        proxy: Type.String({ description: 'the proxy path prefix, /api/external/{provider}/, followed by the provider’s own path' }),
        providerHasKey: Type.Boolean({ description: 'false: no API key for this provider on this service, calls are refused' }),
      }),
      { description: 'agw addition: models of the tier that unified chat does not serve, reached through the proxy' },
    ),
  },
  { title: 'GatewayAliasesResponse' },
);
export type AliasesResponseT = Static<typeof AliasesResponse>;
