import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import { CURSOR_PATTERN, REQUEST_ID_PATTERN, REQUESTS_DEFAULT_LIMIT } from '../../shared/schemas/requests.js';
import { hasKey } from '../gateway/resolve.js';
import { dailySeries, detailView, parseSince, requestView } from '../requests/view.js';
import { DAY_MS } from '../store/spend-rollup.js';
import { dailyRequests, decodeCursor, encodeCursor, getBodies, getRequest, listRequests, type RequestFilter } from '../store/requests.js';
import { requestsByModel } from '../store/requests-by-model.js';
import { listApiKeys } from '../store/keys.js';
import { nanoToUsd } from '../../shared/money.js';
import { activityDetailPage } from '../web/activity-detail-page.js';
import { ACTIVITY_DAYS, activityPage, SINCE_CHOICES, type ActivityQuery } from '../web/activity-page.js';
import { sendPage } from '../web/layout.js';
import { loginPath } from '../web/next.js';
import { htmlErrorHandler } from '../web/page-errors.js';
import { firstValue } from '../web/query.js';
import { signedIn } from '../web/signed-in.js';
import type { RouteOptions } from './index.js';

const CURSOR = new RegExp(CURSOR_PATTERN);

/** The first value of a query parameter given once or repeated, trimmed and cut. */
const first = (v: unknown, max = 200) => firstValue(v).trim().slice(0, max);
const REQUEST_ID = new RegExp(REQUEST_ID_PATTERN);

/** The page's query, forgiving as a web page should be: empty fields are no filter, unknown values the default. */
export function activityQuery(query: Record<string, unknown>): ActivityQuery {
  const status = first(query.status);
  const since = first(query.since);
  const days = Number(first(query.days));
  const cursor = first(query.cursor);
  const endpoint = first(query.endpoint);
  return {
    model: first(query.model),
    provider: first(query.provider, 100),
    status: status === 'ok' || status === 'error' ? status : '',
    since: SINCE_CHOICES.some(([v]) => v === since) ? since : '',
    keyId: first(query.keyId, 100),
    project: first(query.project, 100),
    endpoint: endpoint === 'proxy' || endpoint === 'smart' || endpoint === 'chat' ? endpoint : '',
    days: ACTIVITY_DAYS.includes(days) ? days : 7,
    cursor: CURSOR.test(cursor) ? cursor : '',
  };
}

/**
 * `/activity` and `/activity/{id}` (session): the request log as pages, read through the
 * same store functions as GET /api/requests, /api/requests/daily and /api/requests/{id},
 * for the signed-in account only. Signed out: the login page, and back.
 */
const activityWeb: FastifyPluginAsync<RouteOptions> = async (app, { ctx }) => {
  app.setErrorHandler(htmlErrorHandler('/activity'));

  app.get('/activity', { schema: { hide: true } }, async (req, reply) => {
    const user = await signedIn(ctx, req, reply);
    if (!user) return reply.redirect(loginPath(req.url), 303);
    // the search by request id: straight to the call's page (which says so when it is not one of yours)
    const wanted = first((req.query as Record<string, unknown>).id, 100);
    if (wanted) return reply.redirect(`/activity/${encodeURIComponent(wanted)}`, 303);
    const query = activityQuery(req.query as Record<string, unknown>);
    const now = Date.now();
    const filter: RequestFilter = {
      userId: user.userId,
      model: query.model || undefined,
      provider: query.provider || undefined,
      status: query.status || undefined,
      since: parseSince(query.since || undefined, now),
      keyId: query.keyId || undefined,
      projectId: query.project || undefined,
      endpoint: query.endpoint || undefined,
    };
    const firstDay = Math.floor(now / DAY_MS) - query.days + 1;
    const [page, dailyRows, models, keys] = await Promise.all([
      listRequests(ctx.db, filter, REQUESTS_DEFAULT_LIMIT, query.cursor ? decodeCursor(query.cursor) : undefined),
      dailyRequests(ctx.db, { ...filter, since: undefined }, firstDay * DAY_MS),
      requestsByModel(ctx.db, { ...filter, since: undefined }, firstDay * DAY_MS),
      listApiKeys(ctx.db, user.userId),
    ]);
    const daily = dailySeries(dailyRows, firstDay, now);
    const last = page.rows[page.rows.length - 1];
    return sendPage(
      reply,
      activityPage({
        user,
        query,
        items: page.rows.map((r) => requestView(r)),
        nextCursor: page.more && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
        daily,
        providers: [...ctx.config.providers.keys()].filter((id) => hasKey(ctx.config, id)),
        retentionDays: ctx.config.logs.retentionDays,
        models: models.map(({ costNano, ...m }) => ({ ...m, cost: nanoToUsd(costNano) })),
        keyNames: new Map(keys.map((k) => [k.id, k.name])),
      }),
    );
  });

  app.get('/activity/:id', { schema: { hide: true } }, async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const user = await signedIn(ctx, req, reply);
    if (!user) return reply.redirect(loginPath(req.url), 303);
    const id = req.params.id;
    const row = REQUEST_ID.test(id) ? await getRequest(ctx.db, id, user.userId) : undefined;
    if (!row) throw new AgwError('REQUEST_NOT_FOUND', `There is no call ${id} among yours (calls are kept ${ctx.config.logs.retentionDays} days).`);
    return sendPage(reply, activityDetailPage(user, detailView(row, await getBodies(ctx.db, row.id)), ctx.config.logs.retentionDays));
  });
};

export default activityWeb;
