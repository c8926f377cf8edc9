import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import { ASSETS, assetUrl } from '../web/assets.js';
import { dashboardPage } from '../web/dashboard-page.js';
import { sendPage } from '../web/layout.js';
import { loginPage } from '../web/login-page.js';
import { safeNext } from '../web/next.js';
import { loginFormActions } from '../oauth/login-return.js';
import { signedIn as signedInUser } from '../web/signed-in.js';
import type { RouteOptions } from './index.js';

type Query = { next?: unknown };

/**
 * The web portal at the root: `/` (dashboard, or the login form without a session),
 * `/login?next=/path` (the OAuth flow returns through it), `/assets/*` and `/favicon.ico`
 * (a redirect to the SVG icon, for clients that ask there without reading the page). Not
 * part of the API document.
 */
const portalWeb: FastifyPluginAsync<RouteOptions> = async (app, { ctx }) => {
  const signedIn = (req: FastifyRequest, reply: FastifyReply) => signedInUser(ctx, req, reply);

  app.get('/', { schema: { hide: true } }, async (req, reply) => {
    const user = await signedIn(req, reply);
    if (user) return sendPage(reply, dashboardPage({ ...user, selfTopup: ctx.config.wallet.selfTopup }));
    const next = safeNext((req.query as Query).next);
    return sendPage(reply, loginPage({ next }), 200, { formActions: await loginFormActions(ctx.db, next) });
  });

  app.get('/login', { schema: { hide: true } }, async (req, reply) => {
    const next = safeNext((req.query as Query).next);
    if (await signedIn(req, reply)) return reply.redirect(next, 303);
    return sendPage(reply, loginPage({ next }), 200, { formActions: await loginFormActions(ctx.db, next) });
  });

  app.get('/favicon.ico', { schema: { hide: true } }, async (_req, reply) => reply.redirect(assetUrl('favicon.svg'), 302));

  app.get('/assets/:name', { schema: { hide: true } }, async (req, reply) => {
    const { name } = req.params as { name: string };
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) throw new AgwError('NOT_FOUND', `no asset ${name}`);
    const versioned = (req.query as { v?: string }).v === asset.hash;
    reply
      .header('content-type', asset.type)
      .header('etag', asset.etag)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', versioned ? 'public, max-age=31536000, immutable' : 'public, max-age=300');
    if (req.headers['if-none-match'] === asset.etag) return reply.status(304).send();
    return reply.send(asset.body);
  });
};

export default portalWeb;
