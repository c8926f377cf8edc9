import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';

export const Wallet = Type.Object(
  {
    balance: Type.Number(),
    currency: Type.String(),
    unlimited: Type.Boolean(),
    monthlyAllowance: Type.Number(),
    monthlyAllowanceUsed: Type.Number(),
    monthlyAllowanceRemaining: Type.Number(),
    monthlyAllowanceResetsAt: DateTime(),
    lastAllowanceAt: Type.Union([DateTime(), Type.Null()]),
  },
  { title: 'Wallet' },
);
export type WalletT = Static<typeof Wallet>;

/** GET /api/wallet: the Wallet plus what calls in flight hold (CONTRACT "Holds"). */
export const WalletWithHolds = Type.Object(
  {
    ...Wallet.properties,
    held: Type.Number({ description: 'USD held by calls in flight (their worst-case cost until they settle)' }),
    heldCalls: Type.Integer({ description: 'how many calls in flight hold it' }),
  },
  { title: 'WalletWithHolds' },
);
export type WalletWithHoldsT = Static<typeof WalletWithHolds>;

export const WalletTransaction = Type.Object(
  {
    id: Type.String(),
    type: Type.String(),
    amount: Type.Number({ description: 'USD; negative for debits' }),
    balanceAfter: Type.Number(),
    createdAt: DateTime(),
    description: Type.Union([Type.String(), Type.Null()]),
    providerId: Type.Optional(Type.String()),
    model: Type.Optional(Type.String()),
    projectId: Type.Optional(Type.String()),
    skillId: Type.Optional(Type.Integer()),
    fromAllowance: Type.Optional(
      Type.Number({ description: 'agw addition: USD of this debit paid from the monthly allowance (the rest came from the balance); 0 for credits' }),
    ),
  },
  { title: 'WalletTransaction' },
);

export const WalletTransactions = Type.Object(
  { items: Type.Array(WalletTransaction), nextCursor: Type.Union([Type.String(), Type.Null()]) },
  { title: 'WalletTransactions' },
);
export type WalletTransactionsT = Static<typeof WalletTransactions>;

export const TopupBody = Type.Object(
  { amount: Type.Number({ exclusiveMinimum: 0, maximum: 10000, description: 'USD' }) },
  { additionalProperties: false },
);

export const TransactionsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
    cursor: Type.Optional(Type.String({ pattern: '^[0-9]+$' })),
  },
  { additionalProperties: false },
);
