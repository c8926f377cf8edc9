import { Type, type Static } from 'typebox';
import { DateTime } from './common.js';

/** The spec's "Spend summary" and "Project spend" answers, plus the dashboard's daily series. */

export const RangeQuery = Type.Object({
  range: Type.Optional(
    Type.String({
      maxLength: 16,
      description: 'Nd, a whole number of days from 1d to 365d (default 30d); the window is [now − N×24h, now]',
      examples: ['7d', '30d', '90d', '365d'],
    }),
  ),
});

export const SpendRange = Type.Object({ days: Type.Integer(), since: DateTime() });

export const SpendSummary = Type.Object(
  {
    range: SpendRange,
    totals: Type.Object({
      calls: Type.Integer({ description: 'Completed calls (successful and failed)' }),
      failures: Type.Integer(),
      rawCost: Type.Number({ description: 'USD at the providers’ raw prices' }),
      customerCost: Type.Number({ description: 'USD charged to the wallet' }),
    }),
    byProvider: Type.Array(
      Type.Object({
        providerId: Type.String(),
        calls: Type.Integer(),
        failures: Type.Integer(),
        rawCost: Type.Number(),
        customerCost: Type.Number(),
      }),
    ),
    byProject: Type.Array(
      Type.Object({
        projectId: Type.Union([Type.String(), Type.Null()], { description: 'null = calls without a project tag' }),
        projectName: Type.String(),
        calls: Type.Integer(),
        failures: Type.Integer(),
        rawCost: Type.Number(),
        customerCost: Type.Number(),
      }),
    ),
    purchases: Type.Object(
      {
        count: Type.Integer(),
        amount: Type.Number({ description: 'USD charged to the wallet for skills' }),
      },
      { description: 'agw addition: skill purchases in the range (not calls, so not in totals); charged in all = totals.customerCost + purchases.amount' },
    ),
  },
  { title: 'SpendSummary' },
);
export type SpendSummaryT = Static<typeof SpendSummary>;

export const ProjectParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200, description: 'Project uid' }) });

export const ProjectSpend = Type.Object(
  {
    project: Type.Object({ uid: Type.String(), name: Type.String() }),
    range: SpendRange,
    totals: Type.Object({ calls: Type.Integer(), rawCost: Type.Number(), customerCost: Type.Number() }),
    byProvider: Type.Array(
      Type.Object({ providerId: Type.String(), calls: Type.Integer(), rawCost: Type.Number(), customerCost: Type.Number() }),
    ),
  },
  { title: 'ProjectSpend' },
);
export type ProjectSpendT = Static<typeof ProjectSpend>;

export const DailySpend = Type.Object(
  {
    range: SpendRange,
    days: Type.Array(
      Type.Object({
        date: Type.String({ format: 'date', description: 'UTC day' }),
        calls: Type.Integer(),
        failures: Type.Integer(),
        rawCost: Type.Number(),
        customerCost: Type.Number(),
        purchaseCost: Type.Number({ description: 'USD charged that day for skill purchases' }),
      }),
    ),
  },
  { title: 'DailySpend' },
);
export type DailySpendT = Static<typeof DailySpend>;
