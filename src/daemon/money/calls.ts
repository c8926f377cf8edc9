import { randomBytes } from 'node:crypto';
import type { TierDef } from '../../shared/config/defaults.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { AgwError } from '../../shared/errors.js';
import { usdToNano } from '../../shared/money.js';
import type { UsageType } from '../../shared/providers/index.js';
import type { AppContext } from '../context/index.js';
import { inflightOf } from '../gateway/inflight.js';
import type { CallBodies } from '../requests/bodies.js';
import { keptBodies, observe, settled } from '../requests/settled.js';
import type { CallSpan } from '../telemetry/index.js';
import type { Booking } from './bookings.js';
import type { AdmitKey, RateHeaders } from './engine.js';
import type { Quote } from './hold.js';
import { budgetPeriodKey, type KeyLimits } from './key-limits.js';
import { moneyNow, moneyOf } from './index.js';
import type { Cost } from './pricing.js';
import { quotaPeriod } from './quotas.js';
import { refusalError, withRequestId } from './refusals.js';
import { capAtHold } from './settle.js';
import { describe } from './wallet-line.js';
import { markPhase } from '../telemetry/phases.js';

/**
 * The money side of one gateway call, as the routes see it:
 *   reserve  — before the upstream is contacted: admission takes 1 quota unit and the
 *              call's hold (its worst-case cost, hold.ts), or refuses with 402/429.
 *   finalize — the call was served: it is booked with its actual cost, never more than
 *              the hold (the excess is written off), the hold released; before the client
 *              sees the end of the answer.
 *   release  — the upstream failed or refused: booked as a failure, costs nothing.
 * Each settles once. The engine behind it (engine.ts) depends on the store.
 */
export interface Reservation {
  id: string;
  userId: string;
  keyId: string | null;
  tier: string;
  usageType: UsageType;
  periodKey: string;
  endpoint: Booking['endpoint'];
  projectId: string | null;
  providerId: string;
  model: string | null;
  alias: string | null;
  stream: boolean;
  /** the hold admission took (0 on an unlimited wallet's call is still the quote) */
  holdNano: number;
  createdAt: number;
  /** performance.now() at admission, and of the first byte sent back (request log) */
  startedAt: number;
  firstByteAt: number | null;
  /** upstream attempts made */
  attempts: number;
  /** the limited keys admission counted the call against (its key first, then its makers), and the key's rate windows */
  keys: readonly AdmitKey[];
  rate: RateHeaders | null;
  /** set synchronously by the first finalize/release: a call settles once */
  settled: boolean;
  /** request fields the resolved provider could not honour (X-Service-Dropped-Params), set by the route before it settles */
  droppedParams?: readonly string[];
  /** request log: the bodies (logs.bodies only), the traceparent sent upstream, the span (telemetry only) */
  bodies?: CallBodies;
  traceparent?: string;
  span?: CallSpan;
}

/** Who a metered call is admitted for (gateway/auth.ts callerOf: from the request's principal). */
export interface Caller {
  userId: string;
  tier: string;
  keyId: string | null;
  /** the key's limits (CONTRACT "Keys with limits"); null: none */
  keyLimits: KeyLimits | null;
  /** the limits of the keys the key was made with, nearest first */
  keyAncestors: readonly { keyId: string; limits: KeyLimits }[] | undefined;
  /** the store version the caller's credentials were checked at (SQLite; see Ledger.admit) */
  storeVersion: number | undefined;
}

/**
 * The call's own fields (the caller comes apart, as a `Caller`: spreading it into this
 * object cost ~7 µs per call on Node 20, where every property added after a spread is
 * defined through the runtime, ~0.5 µs each).
 */
export interface ReserveInput {
  usageType: UsageType;
  endpoint: Booking['endpoint'];
  providerId: string;
  model: string | null;
  alias: string | null;
  projectId: string | null;
  stream?: boolean;
  /** the call's worst case (hold.ts) */
  quote: Quote;
  /** the request body as received (kept in the request log with logs.bodies; an object is kept as JSON) */
  body?: Buffer | string | object;
  /** the caller's W3C traceparent header */
  traceparent?: string | string[];
}

/** Usage ids: a random per-process prefix and a counter (unique across daemons, no RNG call per request). */
const ID_PREFIX = `use_${randomBytes(6).toString('hex')}`;
let idSeq = 0;
const nextUsageId = () => `${ID_PREFIX}${(++idSeq).toString(36).padStart(6, '0')}`;

export function tierOf(config: ResolvedConfig, tier: string): TierDef {
  return config.tiers.get(tier) ?? config.tiers.get('free')!;
}

export async function reserve(ctx: AppContext, caller: Caller, input: ReserveInput): Promise<Reservation> {
  markPhase('admitting');
  const tier = tierOf(ctx.config, caller.tier);
  const now = Date.now();
  const period = quotaPeriod(now);
  const r: Reservation = {
    id: nextUsageId(),
    userId: caller.userId,
    keyId: caller.keyId,
    tier: caller.tier,
    usageType: input.usageType,
    periodKey: period.key,
    endpoint: input.endpoint,
    projectId: input.projectId,
    providerId: input.providerId,
    model: input.model,
    alias: input.alias,
    stream: input.stream === true,
    holdNano: input.quote.nano,
    createdAt: now,
    startedAt: performance.now(),
    firstByteAt: null,
    attempts: 0,
    keys: admitKeys(caller, now),
    rate: null,
    settled: false,
  };
  observe(ctx, r, input);
  const money = moneyNow(ctx) ?? (await moneyOf(ctx));
  const refusal = await money.admit({
    id: r.id,
    userId: r.userId,
    tier,
    usageType: r.usageType,
    periodKey: r.periodKey,
    holdNano: r.holdNano,
    tokens: input.quote.tokens,
    keys: r.keys,
    now,
    storeVersion: caller.storeVersion,
  });
  // the rate headers speak of the key itself (its makers' windows are theirs)
  const own = r.keys[0]?.id === r.keyId ? r.keys[0] : undefined;
  if (own && (own.limits.rpm !== null || own.limits.tpm !== null)) r.rate = money.rateOf(own, Date.now());
  if (refusal) {
    const err = refusalError(refusal, { config: ctx.config, tier, usageType: r.usageType, resetsAt: period.end, quote: input.quote, keys: r.keys, keyId: r.keyId, rate: r.rate, now });
    const b = bookingOf(ctx, r, { status: 'refused', err });
    settled(ctx, r, b);
    if (refusal.kind !== 'no-account') await money.record(b);
    throw withRequestId(err, r.id, r.rate);
  }
  inflightOf(ctx).begin();
  markPhase('admitted');
  return r;
}

/** The keys whose budget or rates a call counts against: its key's, then its makers' (those with any). */
function admitKeys(input: Pick<Caller, 'keyId' | 'keyLimits' | 'keyAncestors'>, now: number): AdmitKey[] {
  const chain = [...(input.keyId && input.keyLimits ? [{ keyId: input.keyId, limits: input.keyLimits }] : []), ...(input.keyAncestors ?? [])];
  return chain
    .filter(({ limits: l }) => l.budgetNano !== null || l.rpm !== null || l.tpm !== null)
    .map(({ keyId, limits }) => ({ id: keyId, limits, period: limits.budgetNano !== null ? budgetPeriodKey(limits.budgetPeriod, now) : null }));
}

/** What a call refused before admission is recorded with (e.g. 403 MODEL_NOT_ALLOWED). */
export type RefusedCall = Omit<ReserveInput, 'quote' | 'usageType'> & Pick<Caller, 'userId' | 'tier'> & Partial<Pick<Caller, 'keyId' | 'keyLimits'>> & { usageType?: UsageType };

/**
 * Records a gateway call agw refused before its admission (a model outside the tier or
 * the key's allowlist) in the request log, free; returns the error to throw, carrying
 * the record's id as x-request-id.
 */
export async function refuse(ctx: AppContext, call: RefusedCall, err: AgwError): Promise<AgwError> {
  const now = Date.now();
  const r: Reservation = {
    id: nextUsageId(),
    userId: call.userId,
    keyId: call.keyId ?? null,
    tier: call.tier,
    usageType: call.usageType ?? 'ai_chat',
    periodKey: quotaPeriod(now).key,
    endpoint: call.endpoint,
    projectId: call.projectId,
    providerId: call.providerId,
    model: call.model,
    alias: call.alias,
    stream: call.stream === true,
    holdNano: 0,
    createdAt: now,
    startedAt: performance.now(),
    firstByteAt: null,
    attempts: 0,
    keys: [],
    rate: null,
    settled: true,
  };
  observe(ctx, r, call);
  const b = bookingOf(ctx, r, { status: 'refused', err });
  settled(ctx, r, b);
  const money = await moneyOf(ctx);
  await money.record(b);
  // a key with a rate limit has its x-ratelimit-* headers on every answer, refusals too
  const limits = call.keyLimits;
  const rate = call.keyId && limits && (limits.rpm !== null || limits.tpm !== null) ? money.rateOf({ id: call.keyId, limits, period: null }, Date.now()) : null;
  return withRequestId(err, r.id, rate);
}

interface SettleInput {
  status: Booking['status'];
  providerId?: string;
  cost?: Cost;
  httpStatus?: number | null;
  /** the refusal agw answered (refused calls, and failures answered with an agw error) */
  err?: AgwError;
  answerStatus?: number;
}

/** The whole booking of a settled (or refused) call. */
function bookingOf(ctx: AppContext, r: Reservation, s: SettleInput): Booking {
  const c = s.status === 'finalized' ? s.cost : undefined;
  const providerId = s.providerId ?? r.providerId;
  const capped = c ? capAtHold(c.customerNano, r.holdNano) : { charged: 0, writtenOff: 0 };
  const done = performance.now();
  return {
    id: r.id,
    userId: r.userId,
    keyId: r.keyId,
    usageType: r.usageType,
    endpoint: r.endpoint,
    providerId,
    model: c ? c.model : r.model,
    alias: r.alias,
    projectId: r.projectId,
    periodKey: r.periodKey,
    budgets: r.keys.flatMap((k) => (k.period !== null ? [{ keyId: k.id, period: k.period }] : [])),
    createdAt: r.createdAt,
    status: s.status,
    httpStatus: s.httpStatus ?? null,
    promptTokens: c?.promptTokens ?? 0,
    completionTokens: c?.completionTokens ?? 0,
    cachedTokens: c?.cachedTokens ?? 0,
    cacheWriteTokens: c?.cacheWriteTokens ?? 0,
    reasoningTokens: c?.reasoningTokens ?? 0,
    units: c?.units ?? 0,
    rawNano: c?.rawNano ?? 0,
    customerNano: capped.charged,
    holdNano: s.status === 'refused' ? 0 : r.holdNano,
    writtenOffNano: capped.writtenOff,
    settledAt: Date.now(),
    monthlyAllowance: usdToNano(tierOf(ctx.config, r.tier).monthlyAllowance),
    description: c ? describe(r, providerId, c, capped.writtenOff) : '',
    stream: r.stream,
    answerStatus: s.answerStatus ?? s.err?.status ?? (s.status === 'finalized' ? 200 : 503),
    errorCode: s.err?.code ?? null,
    latencyMs: round3(done - r.startedAt),
    ttfbMs: r.firstByteAt === null ? (s.status === 'finalized' ? round3(done - r.startedAt) : null) : round3(r.firstByteAt - r.startedAt),
    attempts: r.attempts,
    droppedParams: r.droppedParams?.length ? r.droppedParams : null,
    bodies: r.bodies ? keptBodies(ctx, r.bodies, s.err) : undefined,
  };
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;

export async function finalize(ctx: AppContext, r: Reservation, providerId: string, cost: Cost, httpStatus: number): Promise<void> {
  if (r.settled) return;
  r.settled = true;
  markPhase('booking');
  try {
    const b = bookingOf(ctx, r, { status: 'finalized', providerId, cost, httpStatus, answerStatus: httpStatus });
    if (b.writtenOffNano > 0) ctx.metrics.inc('agw_written_off_nusd_total', b.writtenOffNano, { provider: providerId });
    settled(ctx, r, b);
    await (moneyNow(ctx) ?? (await moneyOf(ctx))).settle(b);
    markPhase('booked');
  } finally {
    inflightOf(ctx).end();
  }
}

/** Books a call that was not served (the upstream failed or refused): free, its hold released. */
export async function release(ctx: AppContext, r: Reservation, httpStatus: number | null, answer?: { status?: number; err?: AgwError }): Promise<void> {
  if (r.settled) return;
  r.settled = true;
  try {
    const b = bookingOf(ctx, r, { status: 'failed', httpStatus, err: answer?.err, answerStatus: answer?.status ?? answer?.err?.status ?? httpStatus ?? 503 });
    settled(ctx, r, b);
    await (moneyNow(ctx) ?? (await moneyOf(ctx))).settle(b);
  } finally {
    inflightOf(ctx).end();
  }
}
