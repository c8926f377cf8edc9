import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import type { ResolvedProvider } from '../../shared/config/resolve.js';
import type { UsageFormat } from '../../shared/providers/index.js';
import { AgwError } from '../../shared/errors.js';
import type { AppContext } from '../context/index.js';
import { projectForMember } from '../store/projects.js';
import { finalize, release, type Reservation } from '../money/calls.js';
import { rateHeaders } from '../money/refusals.js';
import { tokenCost, unitCost, type Cost, type UnitCharge } from '../money/pricing.js';
import type { Gateway } from './runtime.js';
import { classifyFailure, outcomeOfStatus, UpstreamAbort, UpstreamError, type UpstreamRequest } from './upstream.js';
import type { SecretRedactor } from '../../shared/secret-redactor.js';
import { plainUsage, SseUsageTap, usageFromJson } from './usage.js';
import type { ProviderKey } from '../../shared/config/provider-keys.js';
import { authorize } from './clouds/credentials.js';
import { EventStreamUsageTap } from './clouds/eventstream.js';
import { failedConnection, failedStatus, retriedConnection, retriedStatus, retryAfterMs } from './keys/policy.js';
import { keyFailed, KeysExhausted, keySucceeded, keyTokens, pickKey } from './keys/pick.js';
import { markPhase } from '../telemetry/phases.js';
import { UpstreamAnswer } from './upstream-answer.js';

/**
 * One metered gateway call after its reservation: the upstream attempt(s), the answer
 * passed back (SSE bytes written as they arrive, JSON whole), and the booking, exactly
 * once, when the answer is complete or the stream broke off. The client closing its
 * connection aborts the upstream request.
 */
export class Call {
  private readonly controller = new UpstreamAbort();
  /** the provider key of the last try (the one that served the call, when it was served) */
  key: ProviderKey | undefined;
  /** secrets derived for this call alone (a request's signature): redacted from its answer */
  private derived: string[] | undefined;

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

  /** What redacts this call's answer: the gateway's redactor, plus the call's own derived secrets. */
  get redact(): SecretRedactor {
    return this.derived ? this.gw.redact.with(this.derived) : this.gw.redact;
  }

  /**
   * The call's upstream request, answered (any status) or thrown (UpstreamError, or
   * KeysExhausted when every key is at its rpm/tpm limit). A provider with one plain key
   * (the hot path) is tried once with the credentials the route put on the request. With
   * several keys, key limits or credentials computed per request (gateway/keys/pick.ts),
   * a key is picked (the conversation's `prefer`red key when it is ready) and authorized;
   * a try answered 429 or 5xx, or not reached, cools its key down and is made once more on
   * another ready key, before any byte reached the caller (the failed answer is discarded
   * unread). Every try counts in `attempts`; only the answer returned is booked.
   */
  send(provider: ResolvedProvider, req: UpstreamRequest, latencyKey?: string, prefer?: ProviderKey): Promise<Dispatcher.ResponseData> {
    markPhase('sending');
    const keys = provider.keys;
    const only = keys[0];
    if (keys.length === 1 && only.apiKey !== undefined && only.rpm === null && only.tpm === null) {
      this.key = only;
      return this.once(provider, req, latencyKey, only, undefined);
    }
    return this.sendWithKeys(provider, req, latencyKey, prefer);
  }

  private async sendWithKeys(provider: ResolvedProvider, req: UpstreamRequest, latencyKey: string | undefined, prefer: ProviderKey | undefined): Promise<Dispatcher.ResponseData> {
    const policy = this.gw.keyPolicy;
    const id = provider.def.id;
    let key = pickKey(id, provider.keys, Date.now(), prefer)!;
    for (let retry = 0; ; retry++) {
      this.key = key;
      let res: Dispatcher.ResponseData;
      let unauthorized = false;
      try {
        let auth;
        try {
          auth = await authorize(provider, key, req, this.gw.upstreams.base(provider.baseUrl), this.gw.redact);
        } catch (err) {
          // no credential for this key (a token endpoint that failed): as a key not reached
          this.reservation.attempts++;
          key.health.calls++;
          keyFailed(policy, key, Date.now(), undefined);
          unauthorized = true;
          throw new UpstreamError('connect_error', err);
        }
        if (auth.derived) (this.derived ??= []).push(auth.derived);
        res = await this.once(provider, req, latencyKey, key, auth.apiKey);
      } catch (err) {
        const again = retry < policy.retries && !this.controller.aborted && (unauthorized || retriedConnection(policy, err));
        const next = again ? pickKey(id, provider.keys, Date.now(), undefined, key) : undefined;
        if (!next) throw err;
        key = next;
        continue;
      }
      if (retry < policy.retries && retriedStatus(policy, res.statusCode) && !this.controller.aborted) {
        const next = pickKey(id, provider.keys, Date.now(), undefined, key);
        if (next) {
          await res.body.dump().catch(() => undefined);
          key = next;
          continue;
        }
      }
      return res;
    }
  }

  /** One try with `key`, observed in metrics (and in the latency EWMA under `latencyKey`); the key's health follows its outcome. */
  private async once(provider: ResolvedProvider, req: UpstreamRequest, latencyKey: string | undefined, key: ProviderKey, apiKey: string | undefined): Promise<Dispatcher.ResponseData> {
    const t0 = performance.now();
    this.reservation.attempts++;
    key.health.calls++;
    if (this.reservation.traceparent) req.headers.traceparent = this.reservation.traceparent;
    // set on the request, not spread into a copy: a property added after a spread costs ~0.5 µs on Node 20
    req.signal = this.controller;
    try {
      const res = await this.gw.upstreams.request(provider, req, apiKey ?? provider.apiKey);
      const ms = performance.now() - t0;
      this.ctx.metrics.observeUpstream(provider.def.id, outcomeOfStatus(res.statusCode), ms / 1000);
      if (latencyKey && res.statusCode < 300) this.gw.latency.record(latencyKey, ms);
      if (res.statusCode >= 400 && failedStatus(this.gw.keyPolicy, res.statusCode)) keyFailed(this.gw.keyPolicy, key, Date.now(), retryAfterMs(res.headers, Date.now()));
      else if (key.health.streak !== 0) keySucceeded(key);
      return res;
    } catch (err) {
      const outcome = err instanceof UpstreamError ? err.outcome : 'connect_error';
      this.ctx.metrics.observeUpstream(provider.def.id, outcome, (performance.now() - t0) / 1000);
      if (!this.controller.aborted && failedConnection(this.gw.keyPolicy, err)) keyFailed(this.gw.keyPolicy, key, Date.now(), undefined);
      throw err;
    }
  }

  /** The served answer's tokens, against its key's tokens-per-minute. */
  served(cost: Cost): void {
    if (this.key !== undefined && this.key.tpm !== null) keyTokens(this.key, cost.promptTokens + cost.completionTokens);
  }
}

export function unreachable(providerId: string, err: unknown): AgwError {
  if (err instanceof KeysExhausted) return err; // 429 UPSTREAM_RATE_LIMITED: every key at its limit
  const why = err instanceof UpstreamError ? err.outcome.replace('_', ' ') : 'failure';
  return new AgwError('UPSTREAM_UNREACHABLE', `upstream ${providerId} is unreachable (${why})`);
}

/**
 * The whole answer body (JSON and error answers are small), read without a stream
 * (upstream-answer.ts): every answer comes from `Upstreams.request`. Rejects when the answer
 * fails or is aborted before its end (a body timeout, the client gone).
 */
export function readBody(res: Dispatcher.ResponseData): Promise<Buffer> {
  if (!(res instanceof UpstreamAnswer)) return Promise.reject(new TypeError('readBody takes an answer of Upstreams.request'));
  return res.whole();
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

/**
 * The X-Service-Project-Id header, if the caller has a role on that project; ignored
 * otherwise. Without the header (most calls) the answer is null at once, not a promise:
 * the call's path then awaits nothing here.
 */
export function projectFor(ctx: AppContext, req: FastifyRequest, userId: string): Promise<string | null> | null {
  const h = req.headers['x-service-project-id'];
  if (typeof h !== 'string' || !h.trim()) return null;
  return projectForMember(ctx.db.hot ?? ctx.db, h.trim(), userId).then((p) => (p ? p.uid : null));
}

export function isEventStream(res: Dispatcher.ResponseData): boolean {
  const ct = res.headers['content-type'];
  return typeof ct === 'string' && ct.includes('text/event-stream');
}

export interface DeliverOptions {
  provider: ResolvedProvider;
  /** the model the cost is booked against (the concrete id; null = read it from a JSON answer) */
  model: string | null;
  /** tokens: what an answer without usage is booked for (money/hold.ts bookingEstimate) */
  price: { kind: 'tokens'; promptEstimate: number; completionFloor?: number } | { kind: 'units'; charge: UnitCharge | undefined };
  /** rewrites of the answer into the shape the caller wants (translate/answer.ts) */
  rewriteSse?: { push(b: Buffer): string; end(): string };
  rewriteJson?: (body: Buffer) => Buffer;
  /** how usage is read off the answer, when it is not the provider's own format (a chat call in another API of it) */
  usageFormat?: UsageFormat;
}

/** Bedrock's streams: AWS event stream frames (clouds/eventstream.ts). */
function isAwsEventStream(res: Dispatcher.ResponseData): boolean {
  const ct = res.headers['content-type'];
  return typeof ct === 'string' && ct.includes('application/vnd.amazon.eventstream');
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
    const format = o.usageFormat ?? o.provider.def.usageFormat;
    const tap = o.price.kind !== 'tokens' ? undefined : sse ? new SseUsageTap(format) : isAwsEventStream(up) ? new EventStreamUsageTap(format) : undefined;
    const price = o.price;
    const settle = () => {
      // a stream that carried only an error delivered nothing: failed, free
      if (tap?.errorOnly) {
        const err = new AgwError('UPSTREAM_UNREACHABLE', `${o.provider.def.id} streamed an error event and nothing else`);
        return release(ctx, reservation, status, { status, err });
      }
      const cost =
        price.kind === 'tokens'
          ? tokenCost(ctx.config, o.provider, o.model, tap ? tap.usage(price.promptEstimate, price.completionFloor) : plainUsage(price.promptEstimate, price.completionFloor ?? 0))
          : unitCost(o.provider, price.charge, o.model);
      call.served(cost);
      return finalize(ctx, reservation, o.provider.def.id, cost, status);
    };
    reply.send(pipeBack(call, up, o.provider.def.id, tap, o.rewriteSse, settle));
    return;
  }
  let body: Buffer;
  try {
    body = await readBody(up);
    markPhase('answer-read');
  } catch (err) {
    const e = unreachable(o.provider.def.id, err);
    await release(ctx, reservation, null, { err: e });
    throw e;
  }
  const format = o.usageFormat ?? o.provider.def.usageFormat;
  const usage = usageFromJson(format, body) ?? (o.price.kind === 'tokens' ? plainUsage(o.price.promptEstimate, o.price.completionFloor ?? 0) : plainUsage(0, 0));
  const cost: Cost = tokenCost(ctx.config, o.provider, o.model ?? modelOfAnswer(body), usage);
  const answer = o.rewriteJson ? rewriteOr(o.rewriteJson, body) : body;
  reservation.bodies?.response.push(answer);
  call.served(cost);
  await finalize(ctx, reservation, o.provider.def.id, cost, status);
  reply.send(answer);
  markPhase('answered');
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
  tap: SseUsageTap | EventStreamUsageTap | undefined,
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
