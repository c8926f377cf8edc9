import { Type, type Static, type TSchema } from 'typebox';
import { KeyEntitlement } from './keys.js';
import { DateTime } from './common.js';
import { Wallet } from './wallet.js';

/** The gateway's request and response shapes (spec: Chat request, Gateway chat request, Entitlements, Aliases). */

const Role = Type.Union([Type.Literal('system'), Type.Literal('developer'), Type.Literal('user'), Type.Literal('assistant'), Type.Literal('tool')]);

/** A text part of a multi-part message (what the OpenAI SDK sends for multi-part text). */
export const TextPart = Type.Object(
  { type: Type.Literal('text'), text: Type.String() },
  { title: 'TextPart', additionalProperties: true },
);

/** A part of a message's content: text, image_url (a data: or http(s): URL), file, input_audio, refusal. */
export const ContentPart = Type.Object(
  { type: Type.String({ description: 'text | image_url | file | input_audio (user) | refusal (assistant)' }) },
  { title: 'ContentPart', additionalProperties: true },
);

export const ToolCall = Type.Object(
  {
    id: Type.String(),
    type: Type.Optional(Type.Literal('function')),
    function: Type.Object({ name: Type.String(), arguments: Type.String({ description: 'the arguments as JSON text' }) }, { additionalProperties: true }),
  },
  { title: 'ToolCall', additionalProperties: true },
);

export const ChatMessage = Type.Object(
  {
    role: Role,
    // one schema with several types, not a union: Ajv's coercion inside union branches would
    // rewrite a one-part array while trying the string branch
    content: Type.Optional(
      Type.Unsafe<string | Static<typeof ContentPart>[] | null>({
        type: ['string', 'array', 'null'],
        items: ContentPart,
        minItems: 1,
        description:
          'a string, or an array of content parts (user: text, image_url, file, input_audio; system, developer, tool: text; assistant: text, refusal); null (or absent) on an assistant turn with tool_calls; anything else is 400 INVALID_REQUEST',
      }),
    ),
    tool_calls: Type.Optional(Type.Array(ToolCall, { description: 'assistant turns: the tool calls the model made' })),
    tool_call_id: Type.Optional(Type.String({ description: 'tool turns: the id of the call this answers' })),
  },
  { title: 'ChatMessage', additionalProperties: true },
);

const FunctionTool = Type.Object(
  {
    type: Type.String({ description: 'function' }),
    function: Type.Optional(
      Type.Object(
        { name: Type.String(), description: Type.Optional(Type.String()), parameters: Type.Optional(Type.Object({}, { additionalProperties: true })), strict: Type.Optional(Type.Boolean()) },
        { additionalProperties: true },
      ),
    ),
  },
  { title: 'FunctionTool', additionalProperties: true },
);

/** The longest model string (alias, model id or provider/model) a chat door or the proxy takes. */
export const MODEL_MAX_LENGTH = 256;

/** An optional field a client may also send as null (meaning: not set). */
const Nullable = <T extends TSchema>(t: T) => Type.Optional(Type.Union([t, Type.Null()]));

const chatFields = {
  messages: Type.Array(ChatMessage, { minItems: 1 }),
  stream: Type.Optional(Type.Boolean({ default: false, description: 'true returns text/event-stream' })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  max_completion_tokens: Nullable(Type.Integer({ minimum: 1, description: 'the output cap (reasoning included); preferred over max_tokens' })),
  tools: Nullable(Type.Array(FunctionTool)),
  tool_choice: Type.Optional(
    Type.Unsafe<string | Record<string, unknown> | null>({ type: ['string', 'object', 'null'], description: 'auto | none | required | {"type":"function","function":{"name"}}' }),
  ),
  parallel_tool_calls: Nullable(Type.Boolean()),
  response_format: Nullable(Type.Object({ type: Type.String({ description: 'text | json_object | json_schema' }) }, { additionalProperties: true })),
  reasoning_effort: Nullable(Type.String({ description: 'none | minimal | low | medium | high: the model’s reasoning, or extended thinking (docs/gateway.md)' })),
};

export const GatewayChatBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: MODEL_MAX_LENGTH, description: 'a concrete model id (or provider/model) or a smart-route alias such as smart-pro' }),
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
const StrictHeader = Type.Optional(
  Type.Union([Type.Literal('1'), Type.Literal('0')], {
    description: '1: a field the resolved provider cannot honour is refused (400 UNSUPPORTED_PARAMETER, before the upstream, free) instead of dropped',
  }),
);

export const GatewayChatHeaders = Type.Object({
  'x-service-response-format': Type.Optional(
    Type.Union([Type.Literal('openai'), Type.Literal('anthropic'), Type.Literal('provider')], {
      description:
        'openai: the answer in the common chat shape (JSON and SSE chunks) whichever provider serves the call; anthropic: in the Messages shape (JSON and Messages events); provider (the default): the resolved provider’s own shape',
    }),
  ),
  'x-service-strict-params': StrictHeader,
});

export const StrictParamsHeaders = Type.Object({ 'x-service-strict-params': StrictHeader });

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
        message: Type.Object(
          {
            role: Type.String(),
            content: Type.Union([Type.String(), Type.Null()]),
            tool_calls: Type.Optional(Type.Array(ToolCall)),
            reasoning_content: Type.Optional(Type.String({ description: 'agw addition: the model’s reasoning (thinking), when it shows it' })),
          },
          { additionalProperties: true },
        ),
        finish_reason: Type.String({ description: 'stop | length | tool_calls | content_filter' }),
      }),
    ),
    usage: Type.Object(
      { prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() },
      { additionalProperties: true, description: 'prompt_tokens_details {cached_tokens, cache_write_tokens}, completion_tokens_details {reasoning_tokens} where known' },
    ),
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
