import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import formbody from '@fastify/formbody';
import { Type } from 'typebox';
import { SkillIdParams, SkillVersionParams } from '../../shared/schemas/skills.js';
import { requireAuth, userOf } from '../auth/principal.js';
import { archiveVersion, mySkills, ownerVersions, patchSkill, republishVersion, timeseries } from '../marketplace/owner.js';
import { skillsOfOwner } from '../store/skills.js';
import { CREATOR_RANGES, creatorPage } from '../web/creator-page.js';
import { sendPage } from '../web/layout.js';
import { loginPath } from '../web/next.js';
import { htmlErrorHandler } from '../web/page-errors.js';
import { signedIn } from '../web/signed-in.js';
import type { RouteOptions } from './index.js';

const StatusForm = Type.Object({
  status: Type.Union([Type.Literal('published'), Type.Literal('archived')]),
  _csrf: Type.Optional(Type.String({ maxLength: 200 })),
});
const CsrfForm = Type.Object({ _csrf: Type.Optional(Type.String({ maxLength: 200 })) });
/** `version` empty: back to the rule (the highest published release). */
const CurrentForm = Type.Object({ version: Type.String({ maxLength: 64 }), _csrf: Type.Optional(Type.String({ maxLength: 200 })) });

/**
 * `/creator` (session): the creator's page, and what its buttons do, as plain form posts
 * answered with a 303 back to the page: set a skill's status (archive or publish:
 * `patchSkill`, as PATCH /api/skills/{id}), publish one version (`republishVersion`, as POST
 * /api/skills/{id}/versions/{v}/republish), archive one (`archiveVersion`, as POST
 * …/versions/{v}/archive) and choose the current one (`patchSkill` with `currentVersion`,
 * as PATCH /api/skills/{id} {currentVersion}). The posts are
 * checked like the API's session calls (requireAuth: the session and the CSRF rule);
 * failures are error pages, a signed-out post goes to the login page.
 */
const creatorWeb: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  app.setErrorHandler(htmlErrorHandler('/creator'));
  const auth = requireAuth(ctx, ['session']);

  app.get('/creator', { schema: { hide: true } }, async (req, reply) => {
    const user = await signedIn(ctx, req, reply);
    if (!user) return reply.redirect(loginPath(req.url), 303);
    const asked = Number((req.query as { days?: unknown }).days);
    const days = CREATOR_RANGES.includes(asked) ? asked : 30;
    const [mine, series, rows] = await Promise.all([
      mySkills(ctx, user.userId),
      timeseries(ctx, user.userId, days),
      skillsOfOwner(ctx.db, user.userId),
    ]);
    const versions = new Map(await Promise.all(rows.map(async (r) => [Number(r.id), await ownerVersions(ctx.db, r)] as const)));
    return sendPage(reply, creatorPage({ user, days, skills: mine.items, versions, series }));
  });

  app.post(
    '/creator/skills/:id/status',
    { preHandler: auth, schema: { hide: true, params: SkillIdParams, body: StatusForm } },
    async (req, reply) => {
      await patchSkill(ctx, userOf(req).userId, req.params.id, { status: req.body.status });
      return reply.redirect(`/creator#skill-${req.params.id}`, 303);
    },
  );

  app.post(
    '/creator/skills/:id/versions/:version/publish',
    { preHandler: auth, schema: { hide: true, params: SkillVersionParams, body: CsrfForm } },
    async (req, reply) => {
      await republishVersion(ctx, userOf(req).userId, req.params.id, req.params.version);
      return reply.redirect(`/creator#skill-${req.params.id}`, 303);
    },
  );

  app.post(
    '/creator/skills/:id/versions/:version/archive',
    { preHandler: auth, schema: { hide: true, params: SkillVersionParams, body: CsrfForm } },
    async (req, reply) => {
      await archiveVersion(ctx, userOf(req).userId, req.params.id, req.params.version);
      return reply.redirect(`/creator#skill-${req.params.id}`, 303);
    },
  );

  app.post(
    '/creator/skills/:id/current',
    { preHandler: auth, schema: { hide: true, params: SkillIdParams, body: CurrentForm } },
    async (req, reply) => {
      await patchSkill(ctx, userOf(req).userId, req.params.id, { currentVersion: req.body.version || null });
      return reply.redirect(`/creator#skill-${req.params.id}`, 303);
    },
  );
};

export default creatorWeb;
