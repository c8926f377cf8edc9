import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import {
  PublicVersions, Skill, SkillCategories, SkillIdParams, SkillSearchQuery, SkillSearchResult, SkillSlugParams,
} from '../../shared/schemas/skills.js';
import { viewerId, visibleSkill } from '../marketplace/access.js';
import { checkCategory } from '../marketplace/publish.js';
import { publicVersions } from '../marketplace/public.js';
import { skillView } from '../marketplace/views.js';
import { searchSkills } from '../store/skill-search.js';
import { skillById, skillBySlug } from '../store/skills.js';
import { slugNotFound } from '../marketplace/slug-suggest.js';
import type { RouteOptions } from './index.js';

/**
 * The public marketplace: search, categories, lookup by id and slug, public versions. No credentials
 * needed; when valid ones are sent, owners and earlier installers also see archived skills.
 */
const skillsRead: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const tags = ['skills'];

  app.get(
    '/skills',
    {
      schema: {
        tags,
        summary: 'Search published skills',
        querystring: SkillSearchQuery,
        response: { 200: SkillSearchResult, ...errorResponses(400) },
      },
    },
    async (req) => {
      const { q, category, owner, sort = 'popular', page = 1, limit = 20 } = req.query;
      if (category) checkCategory(ctx, category);
      const { rows, total } = await searchSkills(ctx.db, { q, category: category || undefined, ownerId: owner || undefined, sort, page, limit });
      return { items: rows.map(skillView), total, page, limit };
    },
  );

  app.get(
    '/skills/categories',
    {
      schema: {
        tags,
        summary: 'The categories a skill may be published in (config marketplace.categories)',
        response: { 200: SkillCategories },
      },
    },
    async () => ({ items: ctx.config.marketplace.categories }),
  );

  app.get(
    '/skills/:id',
    { schema: { tags, summary: 'One skill', params: SkillIdParams, response: { 200: Skill, ...errorResponses(400, 404) } } },
    async (req) => {
      const { id } = req.params;
      return skillView((await visibleSkill(ctx.db, await skillById(ctx.db, id), await viewerId(ctx, req), id)).skill);
    },
  );

  app.get(
    '/skills/by-slug/:slug',
    { schema: { tags, summary: 'One skill by its slug', params: SkillSlugParams, response: { 200: Skill, ...errorResponses(400, 404) } } },
    async (req) => {
      const { slug } = req.params;
      const access = await visibleSkill(ctx.db, await skillBySlug(ctx.db, slug), await viewerId(ctx, req), slug).catch(async (e: unknown) => {
        throw e instanceof AgwError && e.code === 'SKILL_NOT_FOUND' ? await slugNotFound(ctx.db, slug) : e;
      });
      return skillView(access.skill);
    },
  );

  app.get(
    '/skills/:id/public-versions',
    {
      schema: {
        tags,
        summary: 'Published versions with release notes and edit attribution',
        params: SkillIdParams,
        response: { 200: PublicVersions, ...errorResponses(400, 404) },
      },
    },
    async (req) => {
      const { id } = req.params;
      const access = await visibleSkill(ctx.db, await skillById(ctx.db, id), await viewerId(ctx, req), id);
      return publicVersions(ctx.db, access);
    },
  );
};

export default skillsRead;
