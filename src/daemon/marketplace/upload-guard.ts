import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { AgwError } from '../../shared/errors.js';

/**
 * Bounds on publish uploads, so no client can hold the daemon's files, memory or sockets:
 * an upload that sends nothing for `idleMs`, or has not arrived after `deadlineMs`, is
 * answered (408, or 400 when the body ended before its closing boundary) and its temp
 * files removed; an account runs at most `perAccount` uploads at once (429). The answers
 * close the connection: what the client still sends is not read.
 */
export interface UploadLimits {
  idleMs: number;
  deadlineMs: number;
  perAccount: number;
}

const CLOSE = { connection: 'close' };

export function stalled(idleMs: number): AgwError {
  return new AgwError('REQUEST_TIMEOUT', `the upload stalled: nothing arrived for ${idleMs / 1000} s`, undefined, CLOSE);
}

export function tooSlow(deadlineMs: number): AgwError {
  return new AgwError('REQUEST_TIMEOUT', `the upload took longer than ${deadlineMs / 1000} s`, undefined, CLOSE);
}

export function unterminated(): AgwError {
  return new AgwError('INVALID_REQUEST', 'the multipart body ended before its closing boundary', { field: 'body', location: 'body' }, CLOSE);
}

/** The client closed the connection mid-upload (nobody reads this answer; it ends the intake). */
export function clientGone(): AgwError {
  return new AgwError('INVALID_REQUEST', 'the client closed the connection during the upload', { field: 'body', location: 'body' }, CLOSE);
}

/** The boundary of a `multipart/form-data; boundary=…` content type (quoted or not). */
export function boundaryOf(contentType: string | undefined): string | null {
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2]) : null;
}

/**
 * Watches a multipart body's bytes for its close delimiter (`--BOUNDARY--` at the start or
 * after a line break). When the body ends without it, `unterminated` is called at once:
 * the multipart parser would otherwise wait for more, and the request would be answered
 * only by the idle timeout. Attach it in the tick the parser starts reading (a `data`
 * listener added earlier would start the stream before the parser is piped). Returns a
 * function that detaches it.
 */
export function watchCloseDelimiter(raw: Readable, contentType: string | undefined, unterminated: () => void): () => void {
  const boundary = boundaryOf(contentType);
  if (!boundary) return () => undefined;
  const delimiter = Buffer.from(`\r\n--${boundary}--`);
  const keep = delimiter.length - 1;
  let tail: Buffer = Buffer.from('\r\n'); // the body's start counts as the start of a line
  let seen = false;
  const onData = (chunk: Buffer) => {
    if (seen) return;
    const across = Buffer.concat([tail, chunk.subarray(0, keep)]);
    if (across.includes(delimiter) || chunk.includes(delimiter)) {
      seen = true;
      return;
    }
    tail = chunk.length >= keep ? chunk.subarray(chunk.length - keep) : across.subarray(Math.max(0, across.length - keep));
  };
  const onEnd = () => {
    if (!seen) unterminated();
  };
  raw.on('data', onData);
  raw.once('end', onEnd);
  return () => {
    raw.off('data', onData);
    raw.off('end', onEnd);
  };
}

/** An idle timer (re-armed by `touch`) and a deadline; `fire` is called at most once. */
export class Watchdog {
  private idle: NodeJS.Timeout | undefined;
  private readonly deadline: NodeJS.Timeout;
  private done = false;

  constructor(
    private readonly limits: Pick<UploadLimits, 'idleMs' | 'deadlineMs'>,
    private readonly fire: (why: 'idle' | 'deadline') => void,
  ) {
    this.deadline = setTimeout(() => this.trip('deadline'), limits.deadlineMs);
    this.touch();
  }

  touch(): void {
    if (this.done) return;
    if (this.idle) this.idle.refresh();
    else this.idle = setTimeout(() => this.trip('idle'), this.limits.idleMs);
  }

  stop(): void {
    this.done = true;
    clearTimeout(this.idle);
    clearTimeout(this.deadline);
  }

  private trip(why: 'idle' | 'deadline'): void {
    if (this.done) return;
    this.stop();
    this.fire(why);
  }
}

/**
 * The JSON publish body as fastify reads it (a `preParsing` stream): passes the bytes on,
 * and fails with 408 when they stall or take too long, so fastify answers instead of
 * waiting forever.
 */
export function guardedBody(payload: Readable, limits: UploadLimits): Transform {
  const t: Transform = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      dog.touch();
      cb(null, chunk);
    },
    flush(cb: TransformCallback) {
      dog.stop();
      cb();
    },
    destroy(err: Error | null, cb: (e: Error | null) => void) {
      dog.stop();
      cb(err);
    },
  });
  const dog = new Watchdog(limits, (why) => t.destroy(why === 'idle' ? stalled(limits.idleMs) : tooSlow(limits.deadlineMs)));
  // not stream.pipeline: failing the body must not destroy the request, whose answer is the 408
  payload.pipe(t);
  payload.once('error', (e) => t.destroy(e));
  payload.once('close', () => {
    if (!payload.readableEnded) t.destroy(clientGone()); // a request that broke off fails the body too
  });
  return t;
}

/** Uploads in progress per account (this daemon's): at most `max` each. */
export class UploadSlots {
  private readonly inUse = new Map<string, number>();

  constructor(private readonly max: number) {}

  /** A release function, or a 429 TOO_MANY_UPLOADS thrown when the account is at its limit. */
  acquire(userId: string): () => void {
    const n = this.inUse.get(userId) ?? 0;
    if (n >= this.max) {
      throw new AgwError(
        'TOO_MANY_UPLOADS',
        `you already have ${n} uploads in progress (at most ${this.max}): wait for one to finish`,
        { limit: this.max },
        { 'retry-after': '5', ...CLOSE }, // the body it was sending is not read
      );
    }
    this.inUse.set(userId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inUse.get(userId) ?? 1) - 1;
      if (left > 0) this.inUse.set(userId, left);
      else this.inUse.delete(userId);
    };
  }
}
