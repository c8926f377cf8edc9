import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import {
  DailyQuery,
  ExportQuery,
  RequestDetail,
  RequestFilters,
  RequestIdParams,
  RequestList,
  RequestsDaily,
  RequestsQuery,
  REQUESTS_DEFAULT_LIMIT,
  type RequestsDailyT,
} from '../../shared/schemas/requests.js';
import { requireAuth, type Principal } from '../auth/principal.js';
import { exportStream } from '../requests/export.js';
import { liveOf } from '../requests/live.js';
import { dailySeries, detailView, filterFor, keyScope, requestView } from '../requests/view.js';
import { DAY_MS } from '../store/spend-rollup.js';
import { dailyRequests, decodeCursor, encodeCursor, getBodies, getRequest, listRequests } from '../store/requests.js';
import type { RouteOptions } from './index.js';

/**
 * The request log (CONTRACT "Request log"): list, one record, the daily series, a live
 * stream and an export. An agw_ key, an OAuth token or the portal session see their own
 * account's calls; a limited key only its own and those of the keys made with it (it is not
 * the account: requests/view.ts keyScope); the master token sees every account's (`userId`
 * narrows it to one, and its answers name each record's account).
 */
const requests: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const auth = requireAuth(ctx, ['key', 'oauth', 'session', 'master']);
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];
  const live = liveOf(ctx);
  // live streams never end by themselves: end them before the server waits for its connections
  app.addHook('preClose', (done) => {
    live.closeAll();
    done();
  });
  const principal = (p: Principal | undefined): Principal => p!;

  app.get(
    '/requests',
    {
      preHandler: auth,
      schema: {
        tags: ['requests'],
        summary: 'The request log, newest first (cursor pagination, stable while calls are booked)',
        security,
        querystring: RequestsQuery,
        response: { 200: RequestList, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => {
      const p = principal(req.principal);
      const f = filterFor(p, req.query, Date.now(), await keyScope(ctx.db, p));
      const limit = req.query.limit ?? REQUESTS_DEFAULT_LIMIT;
      const { rows, more } = await listRequests(ctx.db, f, limit, req.query.cursor ? decodeCursor(req.query.cursor) : undefined);
      const last = rows[rows.length - 1];
      return {
        items: rows.map((r) => requestView(r, p.kind === 'master')),
        nextCursor: more && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
      };
    },
  );

  app.get(
    '/requests/daily',
    {
      preHandler: auth,
      schema: {
        tags: ['requests'],
        summary: 'Per UTC day: calls, errors, cost and latency p50/p95 (the activity page’s charts)',
        security,
        querystring: DailyQuery,
        response: { 200: RequestsDaily, ...errorResponses(400, 401, 403) },
      },
    },
    async (req): Promise<RequestsDailyT> => {
      const { days = 7, ...rest } = req.query;
      const now = Date.now();
      const first = Math.floor(now / DAY_MS) - days + 1;
      const p = principal(req.principal);
      const rows = await dailyRequests(ctx.db, filterFor(p, rest, now, await keyScope(ctx.db, p)), first * DAY_MS);
      return { days: dailySeries(rows, first, now) };
    },
  );

  app.get(
    '/requests/stream',
    {
      preHandler: auth,
      schema: {
        tags: ['requests'],
        summary: 'Server-sent events: each call as it settles (event `request`, data a Request), with the list’s filters',
        security,
        querystring: RequestFilters,
        response: { 200: Type.String({ description: 'text/event-stream: `event: request` lines with a Request as data; `: keep-alive` comments' }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const p = principal(req.principal);
      const f = filterFor(p, req.query, Date.now(), await keyScope(ctx.db, p));
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.write('retry: 3000\n: connected\n\n');
      live.add(res, f, p.kind === 'master');
    },
  );

  app.get(
    '/requests/export',
    {
      preHandler: auth,
      schema: {
        tags: ['requests'],
        summary: 'Every matching record, newest first, as NDJSON (a Request per line) or CSV; streamed',
        security,
        querystring: ExportQuery,
        response: { 200: Type.String({ description: 'application/x-ndjson or text/csv' }), ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const p = principal(req.principal);
      const { format = 'ndjson', ...rest } = req.query;
      const f = filterFor(p, rest, Date.now(), await keyScope(ctx.db, p));
      const name = `agw-requests-${new Date().toISOString().slice(0, 10)}.${format === 'csv' ? 'csv' : 'ndjson'}`;
      return reply
        .type(format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        .send(exportStream(ctx.db, f, format, p.kind === 'master') as unknown as string); // a stream: never serialized
    },
  );

  app.get(
    '/requests/:id',
    {
      preHandler: auth,
      schema: {
        tags: ['requests'],
        summary: 'One call of the request log (with its bodies when logs.bodies kept them)',
        security,
        params: RequestIdParams,
        response: { 200: RequestDetail, ...errorResponses(400, 401, 404) },
      },
    },
    async (req) => {
      const p = principal(req.principal);
      const row = await getRequest(ctx.db, req.params.id, p.kind === 'master' ? null : p.userId, await keyScope(ctx.db, p));
      if (!row) throw new AgwError('REQUEST_NOT_FOUND', `no request ${req.params.id} among your calls (records are kept ${ctx.config.logs.retentionDays} days)`);
      return detailView(row, await getBodies(ctx.db, row.id), p.kind === 'master');
    },
  );
};

export default requests;
