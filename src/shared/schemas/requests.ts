import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';

/**
 * The request log (CONTRACT "Request log"): one Request per gateway call, refused ones
 * included. GET /api/requests pages through them newest first with a (createdAt, id)
 * cursor; GET /api/requests/{id} is one; /stream and /export give the same objects.
 */
export const REQUESTS_MAX_LIMIT = 500;
export const REQUESTS_DEFAULT_LIMIT = 50;

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description?: string) => Type.Union([t, Type.Null()], { description });

export const RequestRecord = Type.Object(
  {
    id: Type.String({ description: 'the request id, sent as x-request-id on the answer' }),
    createdAt: DateTime('when the call was admitted'),
    endpoint: Type.Union([Type.Literal('proxy'), Type.Literal('smart'), Type.Literal('chat')]),
    keyId: Nullable(Type.String(), 'the agw_ key that made the call (null: an OAuth token)'),
    projectId: Nullable(Type.String(), 'the project tag (X-Service-Project-Id)'),
    provider: Type.String({ description: 'the provider that served the call, else the one it was meant for' }),
    model: Nullable(Type.String(), 'the concrete model used'),
    alias: Nullable(Type.String(), 'the alias or smart-route class the caller named'),
    stream: Type.Boolean(),
    status: Type.Integer({ description: 'the HTTP status agw answered' }),
    code: Nullable(Type.String(), 'agw’s error code, null when agw answered without one'),
    promptTokens: Type.Integer(),
    completionTokens: Type.Integer(),
    cachedTokens: Type.Integer({ description: 'prompt tokens read from the provider’s prompt cache' }),
    cacheWriteTokens: Type.Integer({ description: 'prompt tokens written to the provider’s prompt cache (5-minute and 1-hour)' }),
    reasoningTokens: Type.Integer({ description: 'completion tokens the model spent thinking' }),
    cost: Type.Number({ description: 'USD the caller was charged' }),
    latencyMs: Nullable(Type.Number(), 'admission to the last byte'),
    ttfbMs: Nullable(Type.Number(), 'admission to the first byte sent back'),
    attempts: Type.Integer({ description: 'upstreams tried' }),
    droppedParams: Type.Array(Type.String(), { description: 'request fields the resolved provider could not honour (X-Service-Dropped-Params); [] when none' }),
    userId: Type.Optional(Type.String({ description: 'the account (only in the master token’s answers)' })),
  },
  { title: 'Request' },
);
export type RequestRecordT = Static<typeof RequestRecord>;

const Body = Type.Object({
  text: Nullable(Type.String(), 'the body as kept: at most 32 KB, secrets replaced by [redacted]'),
  bytes: Type.Integer({ description: 'the size of the whole body' }),
  truncated: Type.Boolean(),
});

/** GET /api/requests/{id}: the Request, plus its bodies when logs.bodies kept them. */
export const RequestDetail = Type.Object(
  {
    ...RequestRecord.properties,
    bodies: Type.Optional(Type.Object({ request: Body, response: Body }, { description: 'only with logs.bodies: true' })),
  },
  { title: 'RequestDetail' },
);
export type RequestDetailT = Static<typeof RequestDetail>;

export const RequestList = Type.Object(
  {
    items: Type.Array(RequestRecord),
    nextCursor: Nullable(Type.String(), 'pass as cursor for the next (older) page; null: this was the last'),
  },
  { title: 'RequestList' },
);
export type RequestListT = Static<typeof RequestList>;

/** `<createdAt ms>.<id>` of the last item of a page. */
export const CURSOR_PATTERN = '^[0-9]{1,15}\\.[A-Za-z0-9_-]{1,100}$';
/** an ISO 8601 date-time, or a duration back from now: 30m, 24h, 7d */
export const SINCE_PATTERN = '^([0-9]{1,6}[mhd]|[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]+(Z|[+-][0-9]{2}:[0-9]{2}))?)$';

const filters = {
  since: Type.Optional(Type.String({ pattern: SINCE_PATTERN, description: 'only calls created at or after: an ISO date-time, or 30m / 24h / 7d back from now' })),
  provider: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the concrete model' })),
  status: Type.Optional(Type.Union([Type.Literal('ok'), Type.Literal('error')], { description: 'ok: agw answered < 400; error: ≥ 400' })),
  keyId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  project: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'a project uid' })),
  endpoint: Type.Optional(Type.Union([Type.Literal('proxy'), Type.Literal('smart'), Type.Literal('chat')])),
  userId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'master token only: one account’s calls' })),
};

export const RequestFilters = Type.Object(filters, { additionalProperties: false });
export type RequestFiltersT = Static<typeof RequestFilters>;

export const RequestsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: REQUESTS_MAX_LIMIT, default: REQUESTS_DEFAULT_LIMIT, description: `at most ${REQUESTS_MAX_LIMIT} (more is a 400, never cut silently)` })),
    cursor: Type.Optional(Type.String({ pattern: CURSOR_PATTERN, description: 'nextCursor of the previous page' })),
    ...filters,
  },
  { additionalProperties: false },
);
export type RequestsQueryT = Static<typeof RequestsQuery>;

export const ExportQuery = Type.Object(
  { format: Type.Optional(Type.Union([Type.Literal('ndjson'), Type.Literal('csv')], { default: 'ndjson' })), ...filters },
  { additionalProperties: false },
);

export const REQUEST_ID_PATTERN = '^[A-Za-z0-9_-]{1,100}$';
export const RequestIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: REQUEST_ID_PATTERN }) });

/** GET /api/requests/daily: per UTC day, the calls, the errors and latency percentiles. */
const { since: _since, ...dailyFilters } = filters;
export const DailyQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: 90, default: 7, description: 'the last N UTC days, today included' })),
    ...dailyFilters,
  },
  { additionalProperties: false },
);

export const RequestsDaily = Type.Object(
  {
    days: Type.Array(
      Type.Object({
        date: Type.String({ description: 'YYYY-MM-DD (UTC)' }),
        requests: Type.Integer({ description: 'every record of the day: calls, refused requests and calls in flight' }),
        errors: Type.Integer({ description: 'requests agw answered with ≥ 400 (failed calls and refused requests)' }),
        calls: Type.Integer({ description: 'calls that reached a provider and completed (the spend reports’ calls)' }),
        failed: Type.Integer({ description: 'calls a provider did not complete (free; the spend reports’ failures)' }),
        refused: Type.Integer({ description: 'requests agw refused before any provider (funds, limits, quota, model, key): free, not calls' }),
        cost: Type.Number({ description: 'USD charged' }),
        latencyP50Ms: Nullable(Type.Number()),
        latencyP95Ms: Nullable(Type.Number()),
      }),
    ),
  },
  { title: 'RequestsDaily' },
);
export type RequestsDailyT = Static<typeof RequestsDaily>;
