import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../shared/schemas/common.js';
import { OwnerVersions, PatchVersionBody, Skill, SkillIdParams, SkillVersionParams, VersionFiles } from '../../shared/schemas/skills.js';
import { ACCOUNT_CREDENTIALS, requireAuth, userOf } from '../auth/principal.js';
import { ownedSkill } from '../marketplace/access.js';
import { archiveVersion, editNotes, ownedVersion, ownerVersions, republishVersion } from '../marketplace/owner.js';
import { sealView, skillView } from '../marketplace/views.js';
import { sealOf } from '../marketplace/trust/seal.js';
import { parseManifest, skillById } from '../store/skills.js';
import type { RouteOptions } from './index.js';

/** An owner's versions: the full list (drafts included), release notes, files, archive and republish. */
const skillsVersions: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  const tags = ['skills'];
  const security: Record<string, string[]>[] = [{ bearer: [] }, { session: [] }];
  const auth = requireAuth(ctx, [...ACCOUNT_CREDENTIALS, 'master']);
  const errors = errorResponses(400, 401, 403, 404);

  app.get(
    '/skills/:id/versions',
    {
      preHandler: auth,
      schema: { tags, summary: 'All versions of an owned skill, drafts included', security, params: SkillIdParams, response: { 200: OwnerVersions, ...errors } },
    },
    async (req) => {
      const { id } = req.params;
      return ownerVersions(ctx.db, await ownedSkill(ctx.db, await skillById(ctx.db, id), userOf(req).userId, id));
    },
  );

  app.patch(
    '/skills/:id/versions/:version',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Edit the release notes of a version (sets notesUpdatedAt and notesUpdatedByName)',
        security,
        params: SkillVersionParams,
        body: PatchVersionBody,
        response: { 200: Skill, ...errors },
      },
    },
    async (req) => skillView(await editNotes(ctx, userOf(req).userId, req.params.id, req.params.version, req.body.notes)),
  );

  app.get(
    '/skills/:id/versions/:version/files',
    {
      preHandler: auth,
      schema: { tags, summary: 'Files of a version (owner only)', security, params: SkillVersionParams, response: { 200: VersionFiles, ...errors } },
    },
    async (req) => {
      const { id, version } = req.params;
      await ownedSkill(ctx.db, await skillById(ctx.db, id), userOf(req).userId, id);
      return { files: parseManifest(await ownedVersion(ctx.db, id, version)), ...sealView(await sealOf(ctx.db, id, version)) };
    },
  );

  app.post(
    '/skills/:id/versions/:version/republish',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Publish an archived (or draft) version again; the skill becomes published',
        security,
        params: SkillVersionParams,
        response: { 200: Skill, ...errors },
      },
    },
    async (req) => skillView(await republishVersion(ctx, userOf(req).userId, req.params.id, req.params.version)),
  );

  app.post(
    '/skills/:id/versions/:version/archive',
    {
      preHandler: auth,
      schema: {
        tags,
        summary: 'Withdraw one version: never current, installable only by accounts that installed it before',
        description:
          'The reverse of republish. Accounts that installed the version keep it (and may install it again); others get 403 VERSION_ARCHIVED. The only published version cannot be archived (409 LAST_PUBLISHED_VERSION): archive the skill instead. Archiving an archived version changes nothing.',
        security,
        params: SkillVersionParams,
        response: { 200: Skill, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => skillView(await archiveVersion(ctx, userOf(req).userId, req.params.id, req.params.version)),
  );
};

export default skillsVersions;
