import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { accessOf, canView } from '../marketplace/access.js';
import { currentDocs, publicVersions } from '../marketplace/public.js';
import { sealOf } from '../marketplace/trust/seal.js';
import { skillView } from '../marketplace/views.js';
import { DAY_MS, installsSince } from '../store/skill-installs.js';
import { searchSkills, type SkillSort } from '../store/skill-search.js';
import { displayName, skillBySlug } from '../store/skills.js';
import { userById } from '../store/users.js';
import { creatorPublicPage } from '../web/creator-public-page.js';
import { sendNotFoundPage } from '../web/error-page.js';
import { sendPage } from '../web/layout.js';
import { htmlErrorHandler } from '../web/page-errors.js';
import { firstValue } from '../web/query.js';
import { signedIn } from '../web/signed-in.js';
import { SORTS, skillsPage, type SkillsQuery } from '../web/skills-page.js';
import type { RouteOptions } from './index.js';

/** Results per page of /skills (GET /api/skills's default). */
export const SKILLS_PER_PAGE = 20;


/**
 * A page's query, forgiving as a web page should be: an unknown sort is the default, a
 * page that is not a whole number ≥ 1 is the first; q is cut to GET /api/skills's 200 characters.
 */
export function searchQuery(query: Record<string, unknown>): SkillsQuery {
  const sort = firstValue(query.sort);
  const page = Number(firstValue(query.page));
  return {
    q: firstValue(query.q).trim().slice(0, 200),
    category: firstValue(query.category),
    sort: SORTS.some(([s]) => s === sort) ? (sort as SkillSort) : 'popular',
    page: Number.isInteger(page) && page >= 1 && page <= 100_000 ? page : 1,
  };
}

/** Skills listed on a creator's public page (GET /api/skills's largest page). */
export const CREATOR_SKILLS = 100;

/**
 * The public marketplace pages: `/skills` (search), `/skills/{slug}` (one skill) and
 * `/creators/{id}` (a creator's published skills). They read the store through the same
 * functions as GET /api/skills (?owner=), /api/skills/by-slug/{slug} and /public-versions,
 * with the same visibility: drafts are 404 pages; archived skills only for their owner and
 * earlier installers (signed in), with a note; a creator without a published skill is a 404.
 */
const skillsWeb: FastifyPluginAsync<RouteOptions> = async (app, { ctx }) => {
  app.setErrorHandler(htmlErrorHandler('/skills'));
  app.get('/skills', { schema: { hide: true } }, async (req, reply) => {
    const user = (await signedIn(ctx, req, reply)) ?? undefined;
    const query = searchQuery(req.query as Record<string, unknown>);
    const categories = ctx.config.marketplace.categories;
    const base = { query, categories, user, path: req.url, limit: SKILLS_PER_PAGE };
    if (query.category && !categories.includes(query.category)) {
      const error = `There is no category “${query.category}”. Pick one from the list.`;
      return sendPage(reply, skillsPage({ ...base, items: [], total: 0, error }), 400);
    }
    const { rows, total } = await searchSkills(ctx.db, { ...query, q: query.q || undefined, category: query.category || undefined, limit: SKILLS_PER_PAGE });
    return sendPage(reply, skillsPage({ ...base, items: rows.map(skillView), total }));
  });

  app.get('/skills/:slug', { schema: { hide: true } }, async (req: FastifyRequest<{ Params: { slug: string } }>, reply) => {
    const user = await signedIn(ctx, req, reply);
    const row = await skillBySlug(ctx.db, req.params.slug);
    const access = row ? await accessOf(ctx.db, row, user?.userId ?? null) : undefined;
    if (!access || !canView(access)) return sendNotFoundPage(reply, 'There is no published skill at this address.', user ?? undefined);
    const [versions, docs] = await Promise.all([publicVersions(ctx.db, access), currentDocs(ctx.db, access)]);
    // loaded with the first skill page: Markdown rendering and sanitizing (markdown-it, sanitize-html and postcss) are megabytes a gateway-only daemon never needs
    const { skillPage } = await import('../web/skill-page.js');
    const current = access.skill.current_version;
    const trust = current === null ? undefined : await sealOf(ctx.db, Number(access.skill.id), current);
    const weeklyInstalls = await installsSince(ctx.db, Number(access.skill.id), Date.now() - 7 * DAY_MS);
    return sendPage(reply, skillPage({ skill: skillView(access.skill), versions, docs, weeklyInstalls, user: user ?? undefined, path: req.url, trust }));
  });

  app.get('/creators/:id', { schema: { hide: true } }, async (req: FastifyRequest<{ Params: { id: string } }>, reply) => {
    const user = await signedIn(ctx, req, reply);
    const owner = req.params.id.length <= 100 ? await userById(ctx.db, req.params.id) : undefined;
    const found = owner ? await searchSkills(ctx.db, { ownerId: owner.id, sort: 'popular', page: 1, limit: CREATOR_SKILLS }) : undefined;
    if (!owner || !found || found.total === 0) return sendNotFoundPage(reply, 'There is no creator with published skills at this address.', user ?? undefined);
    const name = displayName(owner.name, owner.email);
    return sendPage(reply, creatorPublicPage({ name, items: found.rows.map(skillView), total: found.total, user: user ?? undefined, path: req.url }));
  });
};

export default skillsWeb;
