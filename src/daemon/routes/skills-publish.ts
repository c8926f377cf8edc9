import { join } from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import multipart from '@fastify/multipart';
import { AgwError } from '../../shared/errors.js';
import { errorResponses } from '../../shared/schemas/common.js';
import { PublishForm, PublishJson, PublishResult, type PublishJsonT } from '../../shared/schemas/skills.js';
import { ACCOUNT_CREDENTIALS, requireAuth, userOf } from '../auth/principal.js';
import { intakeJson } from '../marketplace/intake-json.js';
import { MULTIPART_LIMITS, intakeMultipart } from '../marketplace/intake-multipart.js';
import { publishSkill } from '../marketplace/publish.js';
import { discardStaged, sweepStale, type StagedUpload } from '../marketplace/staged.js';
import type { RouteOptions } from './index.js';

/** JSON publish bodies carry the whole bundle; multipart is streamed and not bound by this. */
const JSON_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * POST /skills: publish a version, as multipart/form-data (fields as form fields, one part
 * named `files` per file, its filename being the path) or as JSON (`files: [{path, content,
 * encoding?}]`). Multipart parsing is registered in this scope only.
 */
const skillsPublish: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  await app.register(multipart, { limits: MULTIPART_LIMITS, preservePath: true, throwFileSizeLimit: false });
  const uploads = join(ctx.dataDir, 'tmp', 'uploads');
  await sweepStale(uploads);
  const staged = new WeakMap<FastifyRequest, StagedUpload>();

  app.post(
    '/skills',
    {
      bodyLimit: JSON_BODY_LIMIT,
      onRequest: [
        requireAuth(ctx, [...ACCOUNT_CREDENTIALS, 'master']),
        async (req) => {
          if (req.principal?.kind === 'master') {
            throw new AgwError('MASTER_TOKEN_CANNOT_PUBLISH', 'the master token cannot publish skills; use a personal agw_ key');
          }
        },
      ],
      preValidation: async (req) => {
        if (!req.isMultipart()) {
          const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
          if (type !== 'application/json') {
            throw new AgwError('UNSUPPORTED_MEDIA_TYPE', 'send the bundle as multipart/form-data or as an application/json body');
          }
          return;
        }
        const { fields, upload } = await intakeMultipart(req, uploads);
        staged.set(req, upload);
        req.body = fields;
      },
      onResponse: async (req) => discardStaged(staged.get(req)),
      schema: {
        tags: ['skills'],
        summary: 'Publish a skill version (multipart form or JSON)',
        security: [{ bearer: [] }, { session: [] }],
        body: {
          content: {
            'application/json': { schema: PublishJson },
            'multipart/form-data': { schema: PublishForm },
          },
        },
        response: { 200: PublishResult, ...errorResponses(400, 401, 403, 409, 413, 415) },
      },
    },
    async (req) => {
      const user = userOf(req);
      const body = req.body as PublishJsonT; // validated: the JSON schema, or the form fields of the multipart schema
      const upload = staged.get(req) ?? intakeJson(body.files);
      try {
        const { files: _files, ...fields } = body;
        return await publishSkill(ctx, user.userId, fields, upload.files);
      } finally {
        await discardStaged(upload);
      }
    },
  );
};

export default skillsPublish;
