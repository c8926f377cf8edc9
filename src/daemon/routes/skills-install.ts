import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { InstallQuery, InstallResult, SkillIdParams, SkillVersionParams } from '../../shared/schemas/skills.js';
import { ACCOUNT_CREDENTIALS, requireAuth, userOf } from '../auth/principal.js';
import { accessOf, canView, notFound } from '../marketplace/access.js';
import { assertInstallable, installSkill } from '../marketplace/install.js';
import { sealOf } from '../marketplace/trust/seal.js';
import { sealView } from '../marketplace/views.js';
import { getVersion, parseManifest, skillById } from '../store/skills.js';
import type { RouteOptions } from './index.js';

/** Installing a skill (charging paid ones once per account) and downloading a version's bundle. */
const skillsInstall: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const tags = ['skills'];
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];
  const auth = requireAuth(ctx, [...ACCOUNT_CREDENTIALS, 'master']);

  app.post(
    '/skills/:id/install',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Install a skill; a paid skill is charged to the wallet on the first install only',
        description: '`?version=` installs that version instead of the current one; a version its owner archived only for accounts that installed it before (403 VERSION_ARCHIVED).',
        security,
        params: SkillIdParams,
        querystring: InstallQuery,
        response: { 200: InstallResult, ...errorResponses(400, 401, 402, 403, 404) },
      },
    },
    async (req) => {
      const installed = await installSkill(ctx, userOf(req), req.params.id, req.query.version);
      return { ...installed, ...sealView(await sealOf(ctx.db, installed.skillId, installed.version)) };
    },
  );

  app.get(
    '/skills/:id/versions/:version/bundle',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Download a version as a gzip tar (owner and installers)',
        security,
        params: SkillVersionParams,
        response: {
          200: { description: 'gzip-compressed tar of the bundle', content: { 'application/gzip': { schema: Type.String({ contentMediaType: 'application/gzip' }) } } },
          ...errorResponses(400, 401, 403, 404),
        },
      },
    },
    async (req, reply) => {
      const { id, version } = req.params;
      const access = await accessOf(ctx.db, (await skillById(ctx.db, id)) ?? missing(id), userOf(req).userId);
      if (!access.isInstaller) {
        if (!canView(access)) throw notFound(id);
        throw new AgwError('NOT_INSTALLED', `install skill "${access.skill.slug}" before downloading it`);
      }
      await assertInstallable(ctx.db, access.skill, userOf(req).userId, version, access.isOwner);
      const v = (await getVersion(ctx.db, id, version))!;
      const name = `${access.skill.slug}-${version.replace(/[^A-Za-z0-9._+-]/g, '_')}.tar.gz`;
      const { bundleStream } = await import('../marketplace/bundle-tar.js'); // tar, loaded with the first download
      // the 200 schema only documents the archive; the stream is sent as is (not serialized)
      return (reply as FastifyReply)
        .type('application/gzip')
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(bundleStream(ctx.db, parseManifest(v), new Date(Number(v.published_at))));
    },
  );
};

function missing(id: number): never {
  throw notFound(id);
}

export default skillsInstall;
