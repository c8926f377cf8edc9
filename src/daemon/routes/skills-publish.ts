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
import { guardedBody, UploadSlots, type UploadLimits } from '../marketplace/upload-guard.js';
import type { RouteOptions } from './index.js';

const MULTIPART = /^\s*multipart\/form-data/i;

/** JSON publish bodies carry the whole bundle; multipart is streamed and not bound by this. */
const JSON_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * POST /skills: publish a version, as multipart/form-data (fields as form fields, one part
 * named `files` per file, its filename being the path) or as JSON (`files: [{path, content,
 * encoding?}]`). Multipart parsing is registered in this scope only. Uploads are bounded
 * (see upload-guard.ts): per account at once, by an idle timeout and by a deadline; the
 * temp files of a multipart upload go when its connection closes, however it ends.
 */
const skillsPublish: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { ctx }) => {
  await app.register(multipart, { limits: MULTIPART_LIMITS, preservePath: true, throwFileSizeLimit: false });
  const uploads = join(ctx.dataDir, 'tmp', 'uploads');
  await sweepStale(uploads);
  const staged = new WeakMap<FastifyRequest, StagedUpload>();
  const m = ctx.config.marketplace;
  const limits: UploadLimits = { idleMs: m.uploadIdleTimeoutMs, deadlineMs: m.uploadTimeoutMs, perAccount: m.maxConcurrentUploads };
  const slots = new UploadSlots(limits.perAccount);

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
        // before the body is read: the slot is held until the connection's answer is done
        async (req, reply) => {
          const release = slots.acquire(userOf(req).userId);
          reply.raw.once('close', release);
        },
      ],
      // a JSON body is read by fastify: bounded by the same idle timeout and deadline (a
      // multipart one is read by intakeMultipart, from the request itself; isMultipart() is
      // not known yet here, the content-type parser runs after preParsing)
      preParsing: async (req, _reply, payload) => (MULTIPART.test(req.headers['content-type'] ?? '') ? payload : guardedBody(payload, limits)),
      preValidation: async (req, reply) => {
        if (!req.isMultipart()) {
          const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
          if (type !== 'application/json') {
            throw new AgwError('UNSUPPORTED_MEDIA_TYPE', 'send the bundle as multipart/form-data or as an application/json body');
          }
          return;
        }
        const { fields, upload } = await intakeMultipart(req, reply, uploads, limits);
        staged.set(req, upload);
        reply.raw.once('close', () => void discardStaged(upload)); // answered or not
        req.body = fields;
      },
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
        response: { 200: PublishResult, ...errorResponses(400, 401, 403, 408, 409, 413, 415, 429) },
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
