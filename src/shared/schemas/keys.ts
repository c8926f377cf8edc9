import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';
import { BUDGET_PERIODS, KEY_LIMIT_BOUNDS } from './key-bounds.js';

export { BUDGET_PERIODS, KEY_LIMIT_BOUNDS };

/** Keys with limits (CONTRACT "Keys with limits"): GET/POST/PATCH/DELETE /api/keys. */

const Period = Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month'), Type.Literal('total')]);
const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T, description?: string) =>
  Type.Union([t, Type.Null()], description ? { description } : {});

export const KeyLimitsView = Type.Object(
  {
    budget: nullable(Type.Number(), 'USD the key may spend per budgetPeriod; null = no budget'),
    budgetPeriod: nullable(Period, 'day, week (from Monday), month or total (never resets), UTC; null when there is no budget'),
    rpm: nullable(Type.Integer(), 'requests per minute; null = no limit'),
    tpm: nullable(Type.Integer(), 'tokens per minute; null = no limit'),
    models: nullable(Type.Array(Type.String()), 'model ids, provider/model, aliases or smart-route classes the key may call; null = any'),
  },
  { title: 'KeyLimits' },
);

const keyFields = {
  id: Type.String(),
  name: nullable(Type.String()),
  prefix: Type.String({ description: 'The key’s public start, e.g. agw_3f9a1c0b2d4e_…' }),
  createdAt: DateTime(),
  lastUsedAt: nullable(DateTime()),
  expiresAt: nullable(DateTime(), 'null = never'),
  revoked: Type.Boolean(),
  limits: KeyLimitsView,
  spent: Type.Number({ description: 'USD spent in the current budget period (all time when the key has no budget)' }),
  parentKeyId: nullable(Type.String(), 'the limited key this one was made with: its limits stay within that key’s (agw addition)'),
};
export const Key = Type.Object(keyFields, { title: 'Key' });
export type KeyT = Static<typeof Key>;

export const Keys = Type.Object({ items: Type.Array(Key) }, { title: 'Keys' });

export const CreatedKeyWithSecret = Type.Object(
  { ...keyFields, key: Type.String({ description: 'The secret key: shown once, stored hashed' }) },
  { title: 'CreatedKeyWithSecret' },
);

/*
 * Request fields that may be null are one JSON Schema `type: [T, 'null']` rather than an
 * anyOf: the server's validator coerces scalar types, and in an anyOf it would turn a null
 * into 0 (a budget of $0) or a 0 into null (no budget) before a branch matched.
 */
const orNull = <T>(schema: Record<string, unknown>, description?: string) =>
  Type.Unsafe<T | null>({ ...schema, type: [schema.type, 'null'], ...(description ? { description } : {}) });
const expiry = (description: string) => orNull<string>({ type: 'string', format: 'date-time' }, description);

export const KeyLimitsInput = Type.Object(
  {
    budget: Type.Optional(orNull<number>({ type: 'number', minimum: 0, maximum: KEY_LIMIT_BOUNDS.budgetUsd }, 'USD per budgetPeriod; null lifts the budget')),
    budgetPeriod: Type.Optional(
      Type.Unsafe<(typeof BUDGET_PERIODS)[number] | null>({ enum: [...BUDGET_PERIODS, null], description: 'default total (never resets)' }),
    ),
    rpm: Type.Optional(orNull<number>({ type: 'integer', minimum: 1, maximum: KEY_LIMIT_BOUNDS.rpm })),
    tpm: Type.Optional(orNull<number>({ type: 'integer', minimum: 1, maximum: KEY_LIMIT_BOUNDS.tpm })),
    models: Type.Optional(orNull<string[]>({ type: 'array', items: { type: 'string', minLength: 1, maxLength: 200 }, minItems: 1, maxItems: KEY_LIMIT_BOUNDS.models })),
    expiresAt: Type.Optional(expiry('when the key stops working; null = never')),
  },
  { additionalProperties: false, title: 'KeyLimitsInput' },
);
export type KeyLimitsInputT = Static<typeof KeyLimitsInput>;

const limitsField = Type.Optional(KeyLimitsInput);
const expiresField = Type.Optional(expiry('the same as limits.expiresAt'));

export const CreateKeyWithLimitsBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }), limits: limitsField, expiresAt: expiresField },
  { additionalProperties: false },
);
export const PatchKeyBody = Type.Object(
  { name: Type.Optional(orNull<string>({ type: 'string', maxLength: 100 })), limits: limitsField, expiresAt: expiresField },
  { additionalProperties: false },
);
export const KeyParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100 }) });

/** Entitlements' `key`, present when they are requested with a limited key (agw addition). */
export const KeyEntitlement = Type.Object(
  {
    id: Type.String(),
    limits: KeyLimitsView,
    expiresAt: nullable(DateTime()),
    spent: Type.Number({ description: 'USD spent in the current budget period (all time without a budget)' }),
    budgetRemaining: nullable(Type.Number(), 'USD left in this budget period; null without a budget'),
    budgetResetsAt: nullable(DateTime(), 'when the budget period ends; null without a budget or for total'),
    requestsRemaining: nullable(Type.Integer(), 'requests left in the rpm window now; null without rpm'),
    tokensRemaining: nullable(Type.Integer(), 'tokens left in the tpm window now; null without tpm'),
  },
  { title: 'KeyEntitlement' },
);
