import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { finished } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../errors.js';
import { reshapeError, type Shape } from '../gateway/compat-errors.js';

/** fastify's own parser of Content-Type values (charset handling as `reply.send` does it) */
const ContentType = createRequire(import.meta.url)('fastify/lib/content-type.js') as {
  /** parsed once per distinct value (fastify's own cache) */
  from(s: string | undefined): { isEmpty: boolean; mediaType: string; parameters: Map<string, string>; toString(): string };
};

const noop = () => undefined;

/**
 * The part of fastify's reply the lane's handlers (the proxy's, unified chat's) and
 * `sendError` use, sending as `reply.send` does: content-type defaults and charset,
 * content-length, no body on 1xx and 204, streams piped with their errors answered or the
 * socket destroyed. `shape`: the route's error shape (the compatible base URLs' onSend hook,
 * gateway/compat-errors.ts), applied to an error body as that hook does.
 */
export class LaneReply {
  private readonly fields: Record<string, string | number | string[]> = {};
  sent = false;

  constructor(
    private readonly req: IncomingMessage,
    readonly raw: ServerResponse,
    readonly request: FastifyRequest,
    private readonly shape?: Shape,
  ) {}

  get statusCode(): number {
    return this.raw.statusCode;
  }

  get log() {
    return this.request.log;
  }

  code(n: number): this {
    this.raw.statusCode = n;
    return this;
  }

  status(n: number): this {
    return this.code(n);
  }

  /** As fastify's `reply.header`: a lower-case name; Set-Cookie values accumulate. */
  header(k: string, v: string | number | string[] = ''): this {
    const key = k.toLowerCase();
    const had = this.fields[key];
    if (had && key === 'set-cookie') this.fields[key] = [...(Array.isArray(had) ? had : [String(had)]), ...(Array.isArray(v) ? v : [String(v)])];
    else this.fields[key] = key === 'set-cookie' && Array.isArray(v) ? v.slice() : v;
    return this;
  }

  headers(o: Record<string, string | number | string[] | undefined>): this {
    for (const k of Object.keys(o)) this.header(k, o[k]);
    return this;
  }

  getHeader(k: string) {
    return this.fields[k.toLowerCase()];
  }

  removeHeader(k: string): this {
    delete this.fields[k.toLowerCase()];
    return this;
  }

  type(t: string): this {
    return this.header('content-type', t);
  }

  /** As fastify's `reply.send` followed by its onSendEnd, for the payloads the lane's handlers send. */
  send(payload?: unknown): this {
    if (this.sent) return this;
    const isStream = payload !== undefined && payload !== null && typeof (payload as NodeJS.ReadableStream).pipe === 'function';
    // anything else (an object to serialize) is not the lane's: refused before the reply counts as sent, so the error is answered
    if (!isStream && payload !== undefined && payload !== null && !Buffer.isBuffer(payload) && typeof payload !== 'string') {
      throw new TypeError('the fast lane sends Buffers, strings and streams');
    }
    this.sent = true;
    const res = this.raw;
    const status = res.statusCode;
    if (payload !== undefined && payload !== null && !isStream) {
      const type = this.fields['content-type'];
      const ct = ContentType.from(type === undefined ? undefined : String(type));
      if (Buffer.isBuffer(payload)) {
        if (ct.isEmpty) this.fields['content-type'] = 'application/octet-stream';
      } else if (typeof payload === 'string') {
        if (this.shape && status >= 400) payload = reshapeError(this.shape, status, payload);
        if (ct.isEmpty) this.fields['content-type'] = 'text/plain; charset=utf-8';
        else if (ct.mediaType.includes('json') && !ct.parameters.has('charset')) this.fields['content-type'] = `${ct.toString()}; charset=utf-8`;
      }
    }
    if (payload === undefined || payload === null) {
      if (status >= 200 && status !== 204 && status !== 304) this.fields['content-length'] = '0';
      res.writeHead(status, this.fields);
      res.end();
      return this;
    }
    if ((status >= 100 && status < 200) || status === 204) {
      delete this.fields['content-type'];
      delete this.fields['content-length'];
      res.writeHead(status, this.fields);
      res.end();
      if (isStream) {
        (payload as NodeJS.ReadableStream).on('error', noop);
        (payload as NodeJS.ReadableStream).resume();
      }
      return this;
    }
    if (isStream) {
      this.stream(payload as NodeJS.ReadableStream & { destroy?: () => void });
      return this;
    }
    const length = Buffer.byteLength(payload as Buffer | string);
    const given = this.fields['content-length'];
    if (!given || Number(given) !== length) this.fields['content-length'] = String(length);
    res.writeHead(status, this.fields);
    res.end(payload);
    return this;
  }

  /** As fastify's sendStream: headers set (not written), piped; an error before the head is answered, after it the socket goes. */
  private stream(payload: NodeJS.ReadableStream & { destroy?: () => void }): void {
    const res = this.raw;
    let open = true;
    finished(payload, { readable: true, writable: false } as never, (err) => {
      open = false;
      if (err == null) return;
      if (res.headersSent || (this.req as { aborted?: boolean }).aborted === true) {
        this.request.log.warn({ err }, 'response stream failed');
        res.destroy();
      } else {
        this.sent = false;
        sendError(err, this.request, this as unknown as FastifyReply);
      }
    });
    finished(res, (err) => {
      if (!open) return;
      if (err != null && res.headersSent) this.request.log.warn({ err }, 'response ended before its stream');
      if (typeof payload.destroy === 'function') payload.destroy();
    });
    for (const k of Object.keys(this.fields)) res.setHeader(k, this.fields[k]);
    payload.pipe(res);
  }
}
