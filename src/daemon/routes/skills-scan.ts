import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { SkillVersionParams, VersionScan } from '../../shared/schemas/skills.js';
import { viewerId, visibleSkill } from '../marketplace/access.js';
import { versionArchived } from '../marketplace/install.js';
import { sealOf } from '../marketplace/trust/seal.js';
import { getVersion, skillById } from '../store/skills.js';
import type { RouteOptions } from './index.js';

/**
 * GET /skills/{id}/versions/{version}/scan: a version's digest, signature and the findings
 * the scan kept at publish. Public for a published version; a draft only for its owner (a
 * 404 for anyone else), an archived version for the owner and earlier installers (anyone
 * else: 403 VERSION_ARCHIVED, which says why an install of it stops).
 */
const skillsScan: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  app.get(
    '/skills/:id/versions/:version/scan',
    {
      schema: {
        tags: ['skills'],
        summary: 'A version\'s digest, signature and scan findings',
        params: SkillVersionParams,
        response: { 200: VersionScan, ...errorResponses(400, 403, 404) },
      },
    },
    async (req) => {
      const { id, version } = req.params;
      const access = await visibleSkill(ctx.db, await skillById(ctx.db, id), await viewerId(ctx, req), id);
      const v = await getVersion(ctx.db, id, version);
      if (!v || (v.status === 'draft' && !access.isOwner)) throw new AgwError('VERSION_NOT_FOUND', `skill ${id} has no version "${version}"`);
      if (v.status === 'archived' && !access.isInstaller) throw versionArchived(access.skill, version);
      return sealOf(ctx.db, id, version);
    },
  );
};

export default skillsScan;
