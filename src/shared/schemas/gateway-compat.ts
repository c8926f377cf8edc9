import { Type } from 'typebox';
import { MODEL_MAX_LENGTH } from './gateway.js';

/**
 * The two compatible base URLs' shapes: {base_url}/gateway/v1 (OpenAI Chat Completions and
 * Models) and {base_url}/gateway (Anthropic Messages and count_tokens). Request bodies are
 * the imitated APIs' own; only what agw reads is spelled out, the rest is passed on or
 * named as dropped (docs/gateway.md).
 */

export const OpenAiErrorBody = Type.Object(
  {
    error: Type.Object(
      {
        message: Type.String(),
        type: Type.String({ description: 'invalid_request_error, authentication_error, insufficient_quota, permission_error, not_found_error, rate_limit_error, api_error' }),
        code: Type.Union([Type.String(), Type.Null()], { description: 'agw’s error code (UPPER_SNAKE)' }),
        param: Type.Union([Type.String(), Type.Null()]),
      },
      { additionalProperties: true },
    ),
  },
  { title: 'OpenAiError', description: 'errors on /gateway/v1: the OpenAI error object, agw’s code as code, the same HTTP status as elsewhere' },
);

export const AnthropicErrorBody = Type.Object(
  {
    type: Type.Literal('error'),
    error: Type.Object(
      {
        type: Type.String({ description: 'invalid_request_error, authentication_error, billing_error, permission_error, not_found_error, request_too_large, rate_limit_error, api_error, overloaded_error' }),
        message: Type.String(),
        code: Type.Optional(Type.String({ description: 'agw’s error code (UPPER_SNAKE)' })),
      },
      { additionalProperties: true },
    ),
  },
  { title: 'AnthropicError', description: 'errors on /gateway/v1/messages: the Anthropic error object plus error.code, the same HTTP status as elsewhere' },
);

export const compatErrors = <T>(schema: T, ...statuses: number[]): Record<number, T> => Object.fromEntries(statuses.map((s) => [s, schema]));

export const ModelsList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(
      Type.Object({
        id: Type.String({ description: 'an alias, or a model id (provider/model where two providers share the id)' }),
        object: Type.Literal('model'),
        created: Type.Integer({ description: 'unix seconds: when the catalog entry was last checked' }),
        owned_by: Type.String({ description: 'the provider id, or agw for an alias' }),
        type: Type.Literal('model', { description: 'the Anthropic Models list’s fields, for the Anthropic SDK: type, display_name, created_at' }),
        display_name: Type.String(),
        created_at: Type.String({ format: 'date-time' }),
      }),
    ),
    has_more: Type.Boolean({ description: 'Anthropic’s paging fields: everything is on one page' }),
    first_id: Type.Union([Type.String(), Type.Null()]),
    last_id: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'ModelsList' },
);

const MessageContent = Type.Unsafe<string | Record<string, unknown>[]>({
  type: ['string', 'array'],
  items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } }, additionalProperties: true },
  description: 'a string or content blocks (text, image, document, tool_use, tool_result, thinking, …)',
});

const messagesFields = {
  model: Type.String({ minLength: 1, maxLength: MODEL_MAX_LENGTH, description: 'an alias, a model id or provider/model, resolved as unified chat resolves it' }),
  messages: Type.Array(
    Type.Object(
      {
        role: Type.Union([Type.Literal('user'), Type.Literal('assistant'), Type.Literal('system')], { description: 'system turns join system' }),
        content: MessageContent,
      },
      { additionalProperties: true },
    ),
    { minItems: 1 },
  ),
  system: Type.Optional(MessageContent),
  tools: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  tool_choice: Type.Optional(Type.Object({ type: Type.String() }, { additionalProperties: true })),
  thinking: Type.Optional(Type.Object({ type: Type.String({ description: 'enabled | adaptive | disabled' }) }, { additionalProperties: true })),
};

export const MessagesBody = Type.Object(
  {
    ...messagesFields,
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, description: 'capped at the model’s output limit; absent: that limit' })),
    stream: Type.Optional(Type.Boolean()),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
    top_k: Type.Optional(Type.Integer({ minimum: 0 })),
    stop_sequences: Type.Optional(Type.Array(Type.String())),
  },
  { title: 'MessagesRequest', additionalProperties: true },
);

export const CountTokensBody = Type.Object(messagesFields, { title: 'CountTokensRequest', additionalProperties: true });

export const MessagesAnswer = Type.Object(
  {
    id: Type.String(),
    type: Type.Literal('message'),
    role: Type.Literal('assistant'),
    model: Type.String(),
    content: Type.Array(Type.Object({ type: Type.String() }, { additionalProperties: true })),
    stop_reason: Type.Union([Type.String(), Type.Null()]),
    usage: Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer() }, { additionalProperties: true }),
  },
  { title: 'MessagesResponse', additionalProperties: true, description: 'the Messages shape; with stream: true, Messages events' },
);

export const CountTokensAnswer = Type.Object({ input_tokens: Type.Integer() }, { title: 'CountTokensResponse' });

export const MessagesHeaders = Type.Object({
  'anthropic-version': Type.Optional(Type.String({ description: 'accepted; agw speaks 2023-06-01' })),
  'anthropic-beta': Type.Optional(Type.String({ description: 'passed on to anthropic; dropped and named for other providers' })),
  'x-service-strict-params': Type.Optional(Type.Union([Type.Literal('1'), Type.Literal('0')])),
});
