import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import type { ResolvedProvider } from '../../shared/config/resolve.js';
import type { UsageFormat } from '../../shared/providers/index.js';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context/index.js';
import { projectForMember } from '../store/projects.js';
import { finalize, rateHeaders, release, type Reservation } from '../money/calls.js';
import { tokenCost, unitCost, type Cost, type UnitCharge } from '../money/pricing.js';
import type { Gateway } from './runtime.js';
import { classifyFailure, outcomeOfStatus, UpstreamAbort, UpstreamError, type UpstreamRequest } from './upstream.js';
import type { SecretRedactor } from '../../shared/secret-redactor.js';
import { plainUsage, SseUsageTap, usageFromJson } from './usage.js';

/**
 * One metered gateway call after its reservation: the upstream attempt(s), the answer
 * passed back (SSE bytes written as they arrive, JSON whole), and the booking, exactly
 * once, when the answer is complete or the stream broke off. The client closing its
 * connection aborts the upstream request.
 */
export class Call {
  private readonly controller = new UpstreamAbort();

  constructor(
    readonly ctx: AppContext,
    readonly gw: Gateway,
    readonly reply: FastifyReply,
    readonly reservation: Reservation,
  ) {
    reply.header('x-request-id', reservation.id);
    if (reservation.rate) reply.headers(rateHeaders(reservation.rate));
    const res = reply.raw;
    res.once('close', () => {
      if (!res.writableFinished) this.controller.abort();
    });
  }

  get signal(): UpstreamAbort {
    return this.controller;
  }

  /** One upstream attempt, observed in metrics (and in the latency EWMA under `latencyKey`). */
  async send(provider: ResolvedProvider, req: UpstreamRequest, latencyKey?: string): Promise<Dispatcher.ResponseData> {
    const t0 = performance.now();
    this.reservation.attempts++;
    if (this.reservation.traceparent) req.headers.traceparent = this.reservation.traceparent;
    try {
      const res = await this.gw.upstreams.request(provider, { ...req, signal: this.controller });
      const ms = performance.now() - t0;
      this.ctx.metrics.observeUpstream(provider.def.id, outcomeOfStatus(res.statusCode), ms / 1000);
      if (latencyKey && res.statusCode < 300) this.gw.latency.record(latencyKey, ms);
      return res;
    } catch (err) {
      const outcome = err instanceof UpstreamError ? err.outcome : 'connect_error';
      this.ctx.metrics.observeUpstream(provider.def.id, outcome, (performance.now() - t0) / 1000);
      throw err;
    }
  }
}

export function unreachable(providerId: string, err: unknown): AgwError {
  const why = err instanceof UpstreamError ? err.outcome.replace('_', ' ') : 'failure';
  return new AgwError('UPSTREAM_UNREACHABLE', `upstream ${providerId} is unreachable (${why})`);
}

/** The whole answer body (JSON and error answers are small). */
export async function readBody(res: Dispatcher.ResponseData): Promise<Buffer> {
  return Buffer.from(await res.body.arrayBuffer());
}

/**
 * The human message of an upstream error body (from readErrorBody), whatever its shape,
 * for agw's own error messages: provider secrets redacted again after JSON unescaping,
 * before it is cut to 300 characters.
 */
export function upstreamMessage(body: Buffer, redact: SecretRedactor): string {
  const text = body.toString('utf8');
  let m: unknown = text;
  try {
    const j = JSON.parse(text) as { error?: unknown; message?: unknown };
    const e = j.error as { message?: unknown } | string | undefined;
    const found = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : j.message;
    if (typeof found === 'string') m = found;
  } catch {
    /* not JSON */
  }
  return redact.text(m as string).slice(0, 300);
}

/** The X-Service-Project-Id header, if the caller has a role on that project; ignored otherwise. */
export async function projectFor(ctx: AppContext, req: FastifyRequest, userId: string): Promise<string | null> {
  const h = req.headers['x-service-project-id'];
  if (typeof h !== 'string' || !h.trim()) return null;
  const p = await projectForMember(ctx.db.hot ?? ctx.db, h.trim(), userId);
  return p ? p.uid : null;
}

export function isEventStream(res: Dispatcher.ResponseData): boolean {
  const ct = res.headers['content-type'];
  return typeof ct === 'string' && ct.includes('text/event-stream');
}

export interface DeliverOptions {
  provider: ResolvedProvider;
  /** the model the cost is booked against (the concrete id; null = read it from a JSON answer) */
  model: string | null;
  price: { kind: 'tokens'; promptEstimate: number } | { kind: 'units'; charge: UnitCharge | undefined };
  /** rewrites of the answer into the shape the caller wants (translate/answer.ts) */
  rewriteSse?: { push(b: Buffer): string; end(): string };
  rewriteJson?: (body: Buffer) => Buffer;
  /** how usage is read off the answer, when it is not the provider's own format (a chat call in another API of it) */
  usageFormat?: UsageFormat;
}

function isJson(res: Dispatcher.ResponseData): boolean {
  const ct = res.headers['content-type'];
  return typeof ct !== 'string' || ct.includes('json');
}

/**
 * Sends a 2xx answer back and books it. Event streams, unit-priced and non-JSON answers
 * (audio, images) are piped chunk by chunk (usage tapped on the way) and booked when they
 * end, before the client sees the end; token-priced JSON answers are read whole, booked,
 * then sent.
 */
export async function deliver(call: Call, up: Dispatcher.ResponseData, o: DeliverOptions): Promise<void> {
  const { ctx, reply, reservation } = call;
  const status = up.statusCode;
  const sse = isEventStream(up);
  if (sse || o.price.kind === 'units' || !isJson(up)) {
    const tap = sse && o.price.kind === 'tokens' ? new SseUsageTap(o.usageFormat ?? o.provider.def.usageFormat) : undefined;
    const price = o.price;
    const settle = () => {
      const cost =
        price.kind === 'tokens'
          ? tokenCost(ctx.config, o.provider, o.model, tap ? tap.usage(price.promptEstimate) : plainUsage(price.promptEstimate, 0))
          : unitCost(o.provider, price.charge, o.model);
      return finalize(ctx, reservation, o.provider.def.id, cost, status);
    };
    reply.send(pipeBack(call, up, o.provider.def.id, tap, o.rewriteSse, settle));
    return;
  }
  let body: Buffer;
  try {
    body = await readBody(up);
  } catch (err) {
    const e = unreachable(o.provider.def.id, err);
    await release(ctx, reservation, null, { err: e });
    throw e;
  }
  const format = o.usageFormat ?? o.provider.def.usageFormat;
  const usage = usageFromJson(format, body) ?? plainUsage(o.price.kind === 'tokens' ? o.price.promptEstimate : 0, 0);
  const cost: Cost = tokenCost(ctx.config, o.provider, o.model ?? modelOfAnswer(body), usage);
  const answer = o.rewriteJson ? rewriteOr(o.rewriteJson, body) : body;
  reservation.bodies?.response.push(answer);
  await finalize(ctx, reservation, o.provider.def.id, cost, status);
  reply.send(answer);
}

/** A rewritten answer, or the original when it cannot be rewritten (not the JSON expected). */
function rewriteOr(rewrite: (b: Buffer) => Buffer, body: Buffer): Buffer {
  try {
    return rewrite(body);
  } catch {
    return body;
  }
}

function modelOfAnswer(body: Buffer): string | null {
  try {
    const j = JSON.parse(body.toString('utf8')) as { model?: unknown; modelVersion?: unknown };
    const m = j.model ?? j.modelVersion;
    return typeof m === 'string' ? m : null;
  } catch {
    return null;
  }
}

/** Resolves when `out` drains; rejects when the call is aborted (the client left) or `out` fails. */
function drained(out: PassThrough, abort: UpstreamAbort): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: unknown) => {
      out.off('drain', onDrain);
      out.off('error', onError);
      abort.off('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = () => done();
    const onError = (e: unknown) => done(e);
    const onAbort = () => done(new UpstreamError('aborted', new Error('the client closed the connection')));
    if (abort.aborted) return onAbort();
    out.once('drain', onDrain);
    out.once('error', onError);
    abort.once('abort', onAbort);
  });
}

/**
 * The answer as a stream for reply.send: written as it arrives, booked once at the end.
 * A stream that breaks off is booked for what was streamed; one that breaks off before a
 * single byte reached the client is released instead (nothing delivered, nothing charged).
 */
function pipeBack(
  call: Call,
  up: Dispatcher.ResponseData,
  providerId: string,
  tap: SseUsageTap | undefined,
  rewrite: DeliverOptions['rewriteSse'],
  settle: () => Promise<void>,
): PassThrough {
  const out = new PassThrough();
  out.on('error', () => undefined); // a client gone away: handled through the abort signal
  void (async () => {
    let complete = false;
    let wrote = false;
    let failure: unknown;
    try {
      for await (const chunk of up.body as AsyncIterable<Buffer>) {
        tap?.push(chunk);
        if (out.destroyed) break;
        const data = rewrite ? rewrite.push(chunk) : chunk;
        if (!data.length) continue;
        if (!wrote) call.reservation.firstByteAt = performance.now();
        wrote = true;
        call.reservation.bodies?.response.push(data);
        if (!out.write(data)) await drained(out, call.signal);
      }
      tap?.end();
      if (rewrite && !out.destroyed) {
        const tail = rewrite.end();
        if (tail) {
          out.write(tail);
          call.reservation.bodies?.response.push(tail);
        }
      }
      complete = !out.destroyed;
    } catch (err) {
      failure = err; // client disconnected, upstream dropped or timed out
    }
    try {
      if (complete || wrote) await settle();
      else await release(call.ctx, call.reservation, null);
    } catch (err) {
      call.ctx.log.error({ err }, 'booking a streamed gateway call failed');
    }
    if (complete) out.end();
    else {
      up.body.destroy();
      out.destroy(unreachable(providerId, new UpstreamError(classifyFailure(failure, call.signal), failure)));
    }
  })();
  return out;
}
