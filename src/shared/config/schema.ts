import { Type, type Static } from 'typebox';

/**
 * The config file's schema (YAML, all keys optional). It validates the file, types the
 * code and is printed by `agw config schema`.
 */
const Band = Type.Union([Type.Literal('lite'), Type.Literal('standard'), Type.Literal('pro'), Type.Literal('premium')]);
const Target = Type.Object(
  { provider: Type.String({ minLength: 1 }), model: Type.String({ minLength: 1 }) },
  { additionalProperties: false },
);
const PriceTier = Type.Object(
  {
    aboveInputTokens: Type.Integer({ minimum: 1, description: 'the tier prices calls whose prompt tokens are strictly above this' }),
    inputPer1M: Type.Number({ minimum: 0 }),
    outputPer1M: Type.Number({ minimum: 0 }),
    cachedInputPer1M: Type.Optional(Type.Number({ minimum: 0 })),
    cacheWritePer1M: Type.Optional(Type.Number({ minimum: 0 })),
    cacheWrite1hPer1M: Type.Optional(Type.Number({ minimum: 0 })),
  },
  { additionalProperties: false },
);
const Quotas = Type.Object(
  {
    ai_chat: Type.Optional(Type.Integer({ minimum: -1 })),
    image_generation: Type.Optional(Type.Integer({ minimum: -1 })),
    model_3d: Type.Optional(Type.Integer({ minimum: -1 })),
    tts: Type.Optional(Type.Integer({ minimum: -1 })),
    skybox: Type.Optional(Type.Integer({ minimum: -1 })),
    npc_generation: Type.Optional(Type.Integer({ minimum: -1 })),
    sound_effect: Type.Optional(Type.Integer({ minimum: -1 })),
  },
  { additionalProperties: false },
);

/** A provider credential: an API key, AWS access keys (bedrock) or a service account's key file (vertex). */
const Credentials = {
  apiKey: Type.Optional(Type.String({ minLength: 1 })),
  accessKeyId: Type.Optional(Type.String({ minLength: 1, description: 'bedrock' })),
  secretAccessKey: Type.Optional(Type.String({ minLength: 1, description: 'bedrock' })),
  sessionToken: Type.Optional(Type.String({ minLength: 1, description: 'bedrock: temporary credentials' })),
  serviceAccount: Type.Optional(
    Type.Union([Type.String({ minLength: 2 }), Type.Record(Type.String(), Type.Unknown())], { description: 'vertex: the service account key file, as a mapping or its JSON text' }),
  ),
};
const KeyLimits = {
  name: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$', description: 'default: key-N by position' })),
  weight: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'share of the calls (default 1)' })),
  rpm: Type.Optional(Type.Integer({ minimum: 1, description: 'requests per minute this key may take' })),
  tpm: Type.Optional(Type.Integer({ minimum: 1, description: 'tokens per minute this key may take' })),
};

export const ConfigSchema = Type.Object(
  {
    trustProxy: Type.Optional(
      Type.Union([Type.Boolean(), Type.Integer({ minimum: 1, maximum: 10 }), Type.String({ minLength: 1 })], {
        description:
          'Behind a load balancer: true trusts X-Forwarded-For, a number trusts that many hops, a string lists trusted proxy addresses or CIDRs (comma-separated). Default false: the client address is the TCP peer.',
      }),
    ),
    publicUrl: Type.Optional(
      Type.String({ pattern: '^https?://[^\\s/]+(:\\d+)?(/.*)?$', description: 'root_url and OIDC issuer; default: the URL agw listens on' }),
    ),
    store: Type.Optional(Type.String({ minLength: 1, description: 'sqlite (DATA/agw.db) or a postgres:// URL; env AGW_STORE' })),
    margin: Type.Optional(Type.Number({ minimum: 1, maximum: 100, description: 'retail = raw price x margin (default 2.0)' })),
    logLevel: Type.Optional(
      Type.Union([
        Type.Literal('fatal'),
        Type.Literal('error'),
        Type.Literal('warn'),
        Type.Literal('info'),
        Type.Literal('debug'),
        Type.Literal('trace'),
        Type.Literal('silent'),
      ]),
    ),
    auth: Type.Optional(
      Type.Object(
        { masterToken: Type.Optional(Type.String({ minLength: 16, description: 'admin/service bearer token; env AGW_MASTER_TOKEN' })) },
        { additionalProperties: false },
      ),
    ),
    providers: Type.Optional(
      Type.Record(
        Type.String(),
        Type.Object(
          {
            baseUrl: Type.Optional(Type.String({ pattern: '^https?://' })),
            ...Credentials,
            keys: Type.Optional(
              Type.Array(Type.Object({ ...Credentials, ...KeyLimits }, { additionalProperties: false }), {
                minItems: 1,
                maxItems: 100,
                description: 'several keys: calls are spread by weight and each key’s rpm/tpm; a key answered 429, 5xx or not at all cools down and the call is tried once more on another',
              }),
            ),
            margin: Type.Optional(Type.Number({ minimum: 1, maximum: 100 })),
            enabled: Type.Optional(Type.Boolean()),
            deployments: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.String({ minLength: 1 }), { description: 'azure-openai: model id -> deployment name' })),
            apiVersion: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z.-]+$', description: 'azure-openai: the api-version query parameter (default 2024-10-21)' })),
            region: Type.Optional(Type.String({ pattern: '^[a-z0-9-]+$', description: 'bedrock: the AWS region (default us-east-1)' })),
            project: Type.Optional(Type.String({ pattern: '^[a-z0-9-]+$', description: 'vertex: the Google Cloud project (default: the service account’s project_id)' })),
            location: Type.Optional(Type.String({ pattern: '^[a-z0-9-]+$', description: 'vertex: the location (default global)' })),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    models: Type.Optional(
      Type.Array(
        Type.Object(
          {
            provider: Type.String({ minLength: 1 }),
            model: Type.String({ minLength: 1 }),
            band: Type.Optional(Band),
            inputPer1M: Type.Optional(Type.Number({ minimum: 0 })),
            outputPer1M: Type.Optional(Type.Number({ minimum: 0 })),
            cachedInputPer1M: Type.Optional(Type.Number({ minimum: 0, description: 'USD per 1M cache-read input tokens (default: inputPer1M)' })),
            cacheWritePer1M: Type.Optional(Type.Number({ minimum: 0, description: 'USD per 1M 5-minute cache-write tokens (default: inputPer1M)' })),
            cacheWrite1hPer1M: Type.Optional(Type.Number({ minimum: 0, description: 'USD per 1M 1-hour cache-write tokens (default: inputPer1M)' })),
            tiers: Type.Optional(
              Type.Array(PriceTier, {
                description: 'dearer prices for calls whose prompt tokens are strictly above a threshold: all the call’s tokens at that tier; replaces the catalog’s tiers',
              }),
            ),
            maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000_000 })),
            contextTokens: Type.Optional(
              Type.Integer({ minimum: 1, maximum: 100_000_000, description: 'the context window: what context held at the provider (previous_response_id, cachedContent) is held at' }),
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    tiers: Type.Optional(
      Type.Record(
        Type.String({ pattern: '^[a-z][a-z0-9_-]*$' }),
        Type.Object(
          {
            displayName: Type.Optional(Type.String({ minLength: 1 })),
            bands: Type.Optional(Type.Array(Band)),
            capabilities: Type.Optional(Type.Array(Type.String())),
            monthlyAllowance: Type.Optional(Type.Number({ minimum: 0 })),
            quotas: Type.Optional(Quotas),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    aliases: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.Array(Target, { minItems: 1 }))),
    smartRoutes: Type.Optional(
      Type.Object(
        {
          'best-cheap-llm': Type.Optional(Type.Array(Target, { minItems: 1 })),
          'best-fast-llm': Type.Optional(Type.Array(Target, { minItems: 1 })),
          'best-quality-llm': Type.Optional(Type.Array(Target, { minItems: 1 })),
        },
        { additionalProperties: false },
      ),
    ),
    marketplace: Type.Optional(
      Type.Object(
        {
          platformFee: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
          categories: Type.Optional(Type.Array(Type.String({ pattern: '^[a-z0-9][a-z0-9-]*$' }), { minItems: 1 })),
          uploadIdleTimeoutMs: Type.Optional(
            Type.Integer({ minimum: 100, maximum: 600000, description: 'a publish upload that sends nothing for this long is answered 408 (default 30000)' }),
          ),
          uploadTimeoutMs: Type.Optional(
            Type.Integer({ minimum: 1000, maximum: 3600000, description: 'a publish upload must have arrived within this time, else 408 (default 600000)' }),
          ),
          maxConcurrentUploads: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 100, description: 'publish uploads in progress per account (per daemon); more get 429 TOO_MANY_UPLOADS (default 3)' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    wallet: Type.Optional(
      Type.Object(
        {
          selfTopup: Type.Optional(
            Type.Boolean({
              description:
                'POST /api/wallet/topup credits the caller directly only when true (default false; `agw serve --demo` turns it on). Otherwise it is 403 TOPUP_DISABLED and an operator credits with `agw admin wallet credit`.',
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    gateway: Type.Optional(
      Type.Object(
        {
          connectTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 120000 })),
          responseTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 600000 })),
          cooldownMs: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600000 })),
          failureThreshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
          reservationTtlMs: Type.Optional(Type.Integer({ minimum: 1000, description: 'no longer used (accepted for old config files)' })),
          leaseTtlMs: Type.Optional(
            Type.Integer({ minimum: 500, maximum: 600000, description: 'PostgreSQL: how long a stopped daemon keeps its budget leases (default 10000)' }),
          ),
          keyCooldownMs: Type.Optional(
            Type.Integer({ minimum: 100, maximum: 3600000, description: 'a provider key answered 429/5xx/nothing without Retry-After sits out this long, doubled per failure in a row (default 1000)' }),
          ),
          keyCooldownMaxMs: Type.Optional(
            Type.Integer({ minimum: 100, maximum: 86400000, description: 'the most a provider key sits out, Retry-After included (default 300000)' }),
          ),
          keyRetryServerErrors: Type.Optional(
            Type.Boolean({
              description:
                'a call answered 5xx, or whose connection broke after it was sent, is tried once more on another key of the provider (default true); false: only 429s and connections never made are, since the provider may have run (and billed) the first try',
            }),
          ),
          keyStatsFlushMs: Type.Optional(
            Type.Integer({ minimum: 100, maximum: 3600000, description: 'how often provider keys’ calls, failures and cooldowns are written for `agw admin providers` (default 10000)' }),
          ),
          stickyTtlMs: Type.Optional(
            Type.Integer({ minimum: 0, maximum: 86400000, description: 'a conversation stays on its provider and key this long after its last call (default 3600000; 0: off)' }),
          ),
          stickyMaxConversations: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 10000000, description: 'conversations remembered per daemon, least recently used forgotten first (default 100000)' }),
          ),
          keyLastUsedFlushMs: Type.Optional(
            Type.Integer({ minimum: 100, maximum: 3600000, description: 'how often keys’ lastUsedAt (minute resolution) is written; default 60000' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    logs: Type.Optional(
      Type.Object(
        {
          retentionDays: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 3650, description: 'request log records are deleted once older than this many days (default 30), in whole UTC days' }),
          ),
          bodies: Type.Optional(
            Type.Boolean({ description: 'also keep request and answer bodies (32 KB each at most, secrets redacted); default false' }),
          ),
          bodiesRetentionDays: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 3650, description: 'bodies are deleted once older than this many days (default and at most: retentionDays)' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
    telemetry: Type.Optional(
      Type.Object(
        {
          otlpEndpoint: Type.Optional(
            Type.String({
              pattern: '^https?://[^\\s/]+(:\\d+)?(/\\S*)?$',
              description: 'OpenTelemetry: export one span per gateway call over OTLP/HTTP (JSON) to this collector, e.g. http://127.0.0.1:4318 (/v1/traces is added unless the URL ends with it); unset: no telemetry',
            }),
          ),
          headers: Type.Optional(Type.Record(Type.String({ minLength: 1 }), Type.String(), { description: 'extra headers sent with every export (e.g. a collector token)' })),
          serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the service.name resource attribute (default agw)' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    additionalProperties: false,
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://agw.dev/schemas/config.json',
    title: 'agw configuration',
    description: 'The agw config file (YAML). Every key is optional: built-in defaults serve.',
  },
);

export type ConfigFile = Static<typeof ConfigSchema>;
export type ModelBandName = Static<typeof Band>;
export type RouteTarget = Static<typeof Target>;
