import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import formbody from '@fastify/formbody';
import { errorResponses } from '../../shared/schemas/common.js';
import { CreateProjectBody, PortalEntitlements, PortalProject, PortalProjects, type PortalEntitlementsT } from '../../shared/schemas/portal.js';
import { USAGE_TYPES } from '../../shared/providers/index.js';
import { modelKey } from '../../shared/config/resolve.js';
import { requireAuth, userOf } from '../auth/principal.js';
import { CHAT_PROVIDERS, hasKey, isChatProvider } from '../gateway/resolve.js';
import { createProject, projectsOfUser } from '../store/projects.js';
import { quotaOverrides } from '../store/quota-overrides.js';
import { quotaPeriod } from '../money/quotas.js';
import type { RouteOptions } from './index.js';

/**
 * What the dashboard shows besides spend: the caller's entitlements (tier, quota
 * meters, allowed models) and projects, and a new project from its Projects card (JSON, or
 * the card's plain form: answered with a 303 back to the dashboard). Session only; the
 * gateway's own entitlements endpoint serves keys and OAuth tokens.
 */
const portalAccount: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  const auth = requireAuth(ctx, ['session']);
  const security = [{ session: [] }];

  app.get(
    '/portal/entitlements',
    {
      preHandler: auth,
      schema: {
        tags: ['portal'],
        summary: 'Your tier, quotas (this calendar month, UTC) and allowed models',
        security,
        response: { 200: PortalEntitlements, ...errorResponses(401) },
      },
    },
    async (req): Promise<PortalEntitlementsT> => {
      const u = userOf(req);
      const tier = ctx.config.tiers.get(u.tier);
      const bands = tier?.bands ?? [];
      const period = quotaPeriod();
      const overrides = await quotaOverrides(ctx.db, u.userId);
      const counters = await ctx.db.all<{ usage_type: string; used: number }>(
        'SELECT usage_type, used FROM quota_counters WHERE user_id = ? AND period_start = ?',
        [u.userId, period.key],
      );
      const used = new Map(counters.map((c) => [c.usage_type, Number(c.used)]));
      const quotas: PortalEntitlementsT['quotas'] = {};
      for (const t of USAGE_TYPES) {
        const limit = overrides.get(t) ?? tier?.quotas[t] ?? 0;
        const n = used.get(t) ?? 0;
        quotas[t] = { used: n, limit, remaining: limit < 0 ? -1 : Math.max(0, limit - n), unlimited: limit < 0 };
      }
      const allowed = (provider: string, model: string) => {
        const m = ctx.config.models.get(modelKey(provider, model));
        return !!m && bands.includes(m.band) && ctx.config.providers.get(provider)?.enabled !== false;
      };
      // unified chat's models first, then those reached through the proxy
      const allowedModels = [...ctx.config.models.values()]
        .filter((m) => allowed(m.provider, m.model))
        .map((m) => ({ provider: m.provider, model: m.model, band: m.band, unifiedChat: isChatProvider(m.provider), providerHasKey: hasKey(ctx.config, m.provider) }))
        .sort((a, b) => Number(b.unifiedChat) - Number(a.unifiedChat));
      const aliases = [...ctx.config.aliases].flatMap(([alias, targets]) => {
        const t = targets.find((x) => allowed(x.provider, x.model));
        return t ? [{ alias, provider: t.provider, modelId: t.model }] : [];
      });
      const end = new Date(period.end).toISOString();
      return {
        userId: u.userId,
        tier: u.tier,
        tierDisplayName: tier?.displayName ?? u.tier,
        capabilities: tier?.capabilities ?? [],
        modelBands: bands,
        period: { start: new Date(period.start).toISOString(), end, resetsAt: end },
        quotas,
        allowedModels,
        unifiedChatProviders: [...CHAT_PROVIDERS],
        aliases,
      };
    },
  );

  app.get(
    '/portal/projects',
    { preHandler: auth, schema: { tags: ['portal'], summary: 'Projects you have a role on', security, response: { 200: PortalProjects, ...errorResponses(401) } } },
    async (req) => ({
      items: (await projectsOfUser(ctx.db, userOf(req).userId)).map((p) => ({
        uid: p.uid,
        name: p.name,
        role: p.role,
        createdAt: new Date(Number(p.created_at)).toISOString(),
      })),
    }),
  );

  app.post(
    '/portal/projects',
    {
      preHandler: auth,
      schema: {
        tags: ['portal'],
        summary: 'Create a project; you become its owner',
        description: 'JSON or form. A browser\'s form post (Accept: text/html) is answered with a 303 to the dashboard\'s Projects card. Tag calls with the project by sending X-Service-Project-Id: <uid>.',
        security,
        body: CreateProjectBody,
        response: { 200: PortalProject, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const p = await ctx.db.tx((q) => createProject(q, userOf(req).userId, req.body.name.trim()));
      const type = req.headers['content-type'] ?? '';
      if (type.startsWith('application/x-www-form-urlencoded') && (req.headers.accept ?? '').includes('text/html')) return reply.redirect('/#projects', 303);
      return { uid: p.uid, name: p.name, role: 'owner', createdAt: new Date(p.created_at).toISOString() };
    },
  );
};

export default portalAccount;
