import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas/common.js';
import { MySkills, PatchSkillBody, Skill, SkillIdParams, Timeseries, TimeseriesQuery } from '../../shared/schemas/skills.js';
import { ACCOUNT_CREDENTIALS, requireAuth, userOf } from '../auth/principal.js';
import { mySkills, patchSkill, timeseries } from '../marketplace/owner.js';
import { skillView } from '../marketplace/views.js';
import type { RouteOptions } from './index.js';

/** The creator's dashboard: own skills with revenue, the daily series, metadata and status changes. */
const skillsOwner: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const tags = ['skills'];
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];
  const auth = requireAuth(ctx, [...ACCOUNT_CREDENTIALS, 'master']);

  app.get(
    '/skills/mine',
    {
      preHandler: auth,
      schema: { tags, summary: 'Skills the caller published, with revenue and installs', security, response: { 200: MySkills, ...errorResponses(401, 403) } },
    },
    async (req) => mySkills(ctx, userOf(req).userId),
  );

  app.get(
    '/skills/mine/timeseries',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Daily installs and revenue of the caller’s skills (UTC days, zero-filled)',
        security,
        querystring: TimeseriesQuery,
        response: { 200: Timeseries, ...errorResponses(400, 401, 403) },
      },
    },
    async (req) => timeseries(ctx, userOf(req).userId, req.query.days ?? 30),
  );

  app.patch(
    '/skills/:id',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Change name, description, category, price, status or the current version of an owned skill',
        description: '`currentVersion` makes a published version current (a prerelease too) until it is archived; `null` hands it back to the rule (the highest published release). A draft or archived version is 409 VERSION_NOT_PUBLISHED.',
        security,
        params: SkillIdParams,
        body: PatchSkillBody,
        response: { 200: Skill, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => skillView(await patchSkill(ctx, userOf(req).userId, req.params.id, req.body)),
  );
};

export default skillsOwner;
