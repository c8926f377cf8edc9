import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas/common.js';
import {
  DailySpend,
  ProjectParams,
  ProjectSpend,
  RangeQuery,
  SpendSummary,
  type DailySpendT,
  type SpendSummaryT,
} from '../../shared/schemas/portal-spend.js';
import { AgwError } from '../../shared/errors.js';
import { nanoToUsd } from '../../shared/money.js';
import type { FastifyRequest } from 'fastify';
import { ACCOUNT_CREDENTIALS, isLimitedKey, requireAuth, userOf, type CredentialKind } from '../auth/principal.js';
import { projectForMember } from '../store/projects.js';
import {
  addCells,
  DAY_MS,
  parseRange,
  projectSpendByProvider,
  userSpendDaily,
  userPurchases,
  userSpendByKey,
  userSpendGroups,
  zeroCells,
  type SpendCells,
} from '../store/spend.js';
import type { RouteOptions } from './index.js';

export const UNTAGGED_PROJECT_NAME = 'Untagged';

function usd(c: SpendCells) {
  return { calls: c.calls, failures: c.failures, rawCost: nanoToUsd(c.rawNano), customerCost: nanoToUsd(c.customerNano) };
}

function rangeView(r: { days: number; since: number }) {
  return { days: r.days, since: new Date(r.since).toISOString() };
}

const byCostDesc = (a: { customerCost: number }, b: { customerCost: number }) => b.customerCost - a.customerCost;

/**
 * The same reports at two places. `/portal/spend/*` is the spec's: session cookie only (a
 * gateway key gets 401). `/spend/*` is agw's addition for the CLI (docs/contract-additions.md):
 * the account's own credentials, an agw_ key without limits, an OAuth token or the session,
 * so one login is enough for `agw spend`. A key with limits or an expiry sees only what
 * it is scoped to, never the account's spend: 403 there.
 */
const VARIANTS: { prefix: string; kinds: readonly CredentialKind[]; security: Record<string, string[]>[]; note: string }[] = [
  { prefix: '/portal/spend', kinds: ['session'], security: [{ session: [] }], note: 'Session cookie only (a gateway key does not work).' },
  {
    prefix: '/spend',
    kinds: ACCOUNT_CREDENTIALS,
    security: [{ bearer: [] }, { session: [] }],
    note: 'The account’s credentials: an agw_ key without limits or expiry, an OAuth access token, or the session (agw addition; a limited key gets 403 FORBIDDEN).',
  },
];

/** 403 for a key with limits or an expiry: it is not the account, and the account's spend is not its to read. */
async function refuseLimitedKey(req: FastifyRequest): Promise<void> {
  if (isLimitedKey(req.principal)) {
    throw new AgwError('FORBIDDEN', 'a key with limits or an expiry cannot read the account’s spend: its own spend is its `spent` (agw keys list)');
  }
}

/**
 * The spend reports. Totals are summed in integer nano-USD from the same group rows as
 * the breakdowns, so they equal the sum of the rows exactly.
 */
const portalSpend: FastifyPluginAsyncTypebox<RouteOptions> = async (app, opts) => {
  for (const v of VARIANTS) await spendRoutes(app, opts, v);
};

async function spendRoutes(app: Parameters<FastifyPluginAsyncTypebox<RouteOptions>>[0], { ctx }: RouteOptions, v: (typeof VARIANTS)[number]): Promise<void> {
  const auth = v.kinds.includes('key') ? [requireAuth(ctx, v.kinds), refuseLimitedKey] : requireAuth(ctx, v.kinds);
  const security = v.security;
  const config = { validationCodes: { range: 'INVALID_RANGE' as const } };
  const errors = v.kinds.includes('key') ? ([400, 401, 403] as const) : ([400, 401] as const);

  app.get(
    `${v.prefix}/summary`,
    {
      preHandler: auth,
      config,
      schema: {
        tags: ['spend'],
        summary: 'The caller’s spend by provider, by project tag and by agw_ key',
        description: v.note,
        security,
        querystring: RangeQuery,
        response: { 200: SpendSummary, ...errorResponses(...errors) },
      },
    },
    async (req): Promise<SpendSummaryT> => {
      const u = userOf(req);
      const range = parseRange(req.query.range);
      const [groups, purchases, keys] = await Promise.all([
        userSpendGroups(ctx.db, u.userId, range.since),
        userPurchases(ctx.db, u.userId, range.since),
        userSpendByKey(ctx.db, u.userId, range.since),
      ]);
      const totals = zeroCells();
      const providers = new Map<string, SpendCells>();
      const projects = new Map<string | null, SpendCells & { name: string }>();
      for (const g of groups) {
        addCells(totals, g);
        if (!providers.has(g.providerId)) providers.set(g.providerId, zeroCells());
        addCells(providers.get(g.providerId)!, g);
        const name = g.projectId === null ? UNTAGGED_PROJECT_NAME : (g.projectName ?? g.projectId);
        if (!projects.has(g.projectId)) projects.set(g.projectId, { ...zeroCells(), name });
        addCells(projects.get(g.projectId)!, g);
      }
      return {
        range: rangeView(range),
        totals: usd(totals),
        byProvider: [...providers].map(([providerId, c]) => ({ providerId, ...usd(c) })).sort(byCostDesc),
        byProject: [...projects]
          .map(([projectId, c]) => ({ projectId, projectName: c.name, ...usd(c) }))
          .sort(byCostDesc),
        purchases: { count: purchases.count, amount: nanoToUsd(purchases.nano) },
        byKey: keys.map((k) => ({ keyId: k.keyId, keyName: k.keyName, ...usd(k) })).sort(byCostDesc),
      };
    },
  );

  app.get(
    `${v.prefix}/projects/:id`,
    {
      preHandler: auth,
      config,
      schema: {
        tags: ['spend'],
        summary: 'One project’s spend by provider (every member’s calls tagged with it)',
        description: v.note,
        security,
        params: ProjectParams,
        querystring: RangeQuery,
        response: { 200: ProjectSpend, ...errorResponses(...errors, 404) },
      },
    },
    async (req) => {
      const u = userOf(req);
      const range = parseRange(req.query.range);
      const project = await projectForMember(ctx.db, req.params.id, u.userId);
      if (!project) throw new AgwError('PROJECT_NOT_FOUND', `no project ${req.params.id} that you have a role on`);
      const rows = await projectSpendByProvider(ctx.db, project.uid, range.since);
      const totals = zeroCells();
      for (const r of rows) addCells(totals, r);
      const { failures: _f, ...t } = usd(totals);
      return {
        project: { uid: project.uid, name: project.name },
        range: rangeView(range),
        totals: t,
        byProvider: rows
          .map((r) => {
            const { failures: _x, ...c } = usd(r);
            return { providerId: r.providerId, ...c };
          })
          .sort(byCostDesc),
      };
    },
  );

  app.get(
    `${v.prefix}/daily`,
    {
      preHandler: auth,
      config,
      schema: {
        tags: ['spend'],
        summary: 'The caller’s spend per UTC day (the dashboard’s chart); every day of the range, zeros included',
        description: v.note,
        security,
        querystring: RangeQuery,
        response: { 200: DailySpend, ...errorResponses(...errors) },
      },
    },
    async (req): Promise<DailySpendT> => {
      const u = userOf(req);
      const now = Date.now();
      const range = parseRange(req.query.range, now);
      const [daily, purchases] = await Promise.all([userSpendDaily(ctx.db, u.userId, range.since), userPurchases(ctx.db, u.userId, range.since)]);
      const rows = new Map(daily.map((r) => [r.day, r]));
      const days: DailySpendT['days'] = [];
      const last = Math.max(Math.floor(now / DAY_MS), ...rows.keys(), ...purchases.byDay.keys());
      for (let d = Math.floor(range.since / DAY_MS); d <= last; d++) {
        const purchaseCost = nanoToUsd(purchases.byDay.get(d) ?? 0);
        days.push({ date: new Date(d * DAY_MS).toISOString().slice(0, 10), ...usd(rows.get(d) ?? zeroCells()), purchaseCost });
      }
      return { range: rangeView(range), days };
    },
  );
}

export default portalSpend;
