import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AgwError } from '../../shared/errors.js';
import { BUNDLE_PATH, MAX_FILE_BYTES, MAX_FILES } from '../../shared/bundle/index.js';
import { discardStaged, type StagedFile, type StagedUpload } from './staged.js';
import { clientGone, stalled, tooSlow, unterminated, Watchdog, watchCloseDelimiter, type UploadLimits } from './upload-guard.js';

/** Busboy limits for publish: one more than allowed, so "too many" / "too large" are detectable. */
export const MULTIPART_LIMITS = {
  fileSize: MAX_FILE_BYTES + 1,
  files: MAX_FILES + 1,
  fields: 32,
  fieldSize: 64 * 1024,
  parts: MAX_FILES + 1 + 32,
  headerPairs: 64,
};

/** The form part name that carries bundle files; each part's filename is the path in the bundle. */
export const FILES_FIELD = 'files';

export interface MultipartIntake {
  fields: Record<string, string>;
  upload: StagedUpload;
}

/**
 * Reads a multipart publish request part by part: each file is hashed while it streams to
 * its own temp file (at most MAX_FILE_BYTES + 1 bytes of it), so only one chunk of one
 * file is in memory at a time. Form fields are collected as strings for schema validation.
 *
 * Bounded: every part and file chunk re-arms an idle timer. When nothing arrives for
 * `limits.idleMs` (408; 400 when the body had ended without its closing boundary), when
 * the upload is not done after `limits.deadlineMs` (408), when the body ends without its
 * closing boundary (400, at once), or when the client closes the connection, the intake stops at once: the file being written is closed and the temp
 * directory removed (again when the abandoned parser settles, for anything it left).
 */
export async function intakeMultipart(req: FastifyRequest, reply: FastifyReply, tmpRoot: string, limits: UploadLimits): Promise<MultipartIntake> {
  await mkdir(tmpRoot, { recursive: true });
  const upload: StagedUpload = { files: [], dir: await mkdtemp(join(tmpRoot, 'upload-')) };
  const state: PartState = {};
  let stop!: (e: AgwError) => void;
  const stopped = new Promise<never>((_resolve, reject) => (stop = reject));
  let halted = false;
  const halt = (e: AgwError) => {
    halted = true;
    state.halted = e; // a part the parser hands over after this is not read
    dog.stop();
    state.abort?.(e); // the file being written ends now, and its descriptor with it
    stop(e);
  };
  const dog = new Watchdog(limits, (why) =>
    halt(why === 'deadline' ? tooSlow(limits.deadlineMs) : req.raw.complete ? unterminated() : stalled(limits.idleMs)),
  );
  const onClose = () => {
    if (!reply.raw.writableFinished) halt(clientGone());
  };
  reply.raw.once('close', onClose);
  const work = readParts(req, upload, state, () => dog.touch());
  // readParts has piped the request into the parser by now (synchronously): watch the same bytes
  const unwatch = watchCloseDelimiter(req.raw, req.headers['content-type'], () => halt(unterminated()));
  try {
    return await Promise.race([work, stopped]);
  } catch (e) {
    req.raw.resume(); // discard what the client still sends, so it can read the answer
    await discardStaged(upload);
    throw multipartError(e);
  } finally {
    dog.stop();
    unwatch();
    reply.raw.off('close', onClose);
    // an abandoned parser settles when the connection closes: remove what it wrote meanwhile
    if (halted) void work.catch(() => undefined).then(() => discardStaged(upload));
  }
}

/** How to end the part being read now. */
interface PartState {
  abort?: (e: Error) => void;
  halted?: Error;
}

async function readParts(req: FastifyRequest, upload: StagedUpload, state: PartState, touch: () => void): Promise<MultipartIntake> {
  const fields: Record<string, string> = {};
  let fault: AgwError | undefined;
  try {
    for await (const part of req.parts()) {
      if (state.halted) {
        if (part.type === 'file') part.file.destroy(state.halted);
        throw state.halted;
      }
      touch();
      if (part.type === 'field') {
        if (part.fieldname === FILES_FIELD) fault ??= badRequest('each "files" part must be a file with a filename (its path in the bundle)');
        else if (part.valueTruncated) fault ??= badRequest(`form field "${part.fieldname}" is too long`, part.fieldname);
        else if (Object.hasOwn(fields, part.fieldname)) fault ??= badRequest(`form field "${part.fieldname}" is given twice`, part.fieldname);
        else fields[part.fieldname] = String(part.value);
        continue;
      }
      if (part.fieldname !== FILES_FIELD) {
        fault ??= badRequest(`unexpected file part "${part.fieldname}": bundle files go in parts named "files"`, part.fieldname);
      }
      if (fault) {
        state.abort = (e) => part.file.destroy(e);
        await drain(part.file);
      } else {
        upload.files.push(await spool(part.file, part.filename ?? '', join(upload.dir!, String(upload.files.length)), touch, state));
      }
      state.abort = undefined;
    }
  } finally {
    state.abort = undefined;
  }
  if (fault) throw fault;
  return { fields, upload };
}

async function spool(stream: Readable, path: string, tmpFile: string, touch: () => void, state: PartState): Promise<StagedFile> {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      touch();
      hash.update(chunk);
      size += chunk.length;
      cb(null, chunk);
    },
  });
  const sink = createWriteStream(tmpFile);
  // the parser's file stream can be destroyed without a 'close' event (an unterminated
  // body), which the pipeline would wait for forever: end the file itself
  state.abort = (e) => {
    sink.destroy(e);
    stream.destroy(e);
  };
  if (state.halted) state.abort(state.halted);
  await pipeline(stream, meter, sink);
  if (size > MAX_FILE_BYTES) {
    await rm(tmpFile, { force: true });
    return { path, size, sha256: '' };
  }
  return { path, size, sha256: hash.digest('hex'), tmpFile };
}

async function drain(stream: Readable): Promise<void> {
  stream.resume();
  await new Promise<void>((resolve) => {
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
}

function badRequest(message: string, field = FILES_FIELD): AgwError {
  return new AgwError('INVALID_REQUEST', message, { field, location: 'body' });
}

function multipartError(e: unknown): unknown {
  const code = (e as { code?: string })?.code;
  switch (code) {
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT': {
      const message = `the bundle has more than ${MAX_FILES} files`;
      return new AgwError('TOO_MANY_FILES', message, { problems: [{ path: BUNDLE_PATH, rule: 'TOO_MANY_FILES', message }] });
    }
    case 'FST_FIELDS_LIMIT':
      return badRequest('too many form fields', 'body');
    case 'FST_PROTO_VIOLATION':
    case 'FST_INVALID_JSON_FIELD_ERROR':
      return badRequest((e as Error).message, 'body');
  }
  if (e instanceof AgwError || (e as { syscall?: string })?.syscall) return e; // ours, or a disk error (500)
  return badRequest(`malformed multipart body: ${(e as Error)?.message ?? 'unreadable'}`, 'body');
}
