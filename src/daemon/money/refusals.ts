import type { TierDef } from '../../shared/config/defaults.js';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { AgwError } from '../../shared/errors.js';
import { nanoToUsd } from '../../shared/money.js';
import type { UsageType } from '../../shared/providers/index.js';
import type { AdmitKey, RateHeaders, Refusal } from './engine.js';
import { maxAffordableTokens, usdText, type Quote } from './hold.js';
import { budgetPeriodEnd } from './key-limits.js';
import { resetText } from './rates.js';

/**
 * What a refused admission answers (calls.ts `reserve`): 402 INSUFFICIENT_FUNDS and
 * KEY_BUDGET_EXCEEDED, 429 QUOTA_EXCEEDED and RATE_LIMITED, each saying what was short and
 * what to do next, with the headers the official SDKs read (x-should-retry, retry-after,
 * x-ratelimit-*), and the call's request id.
 */

/** What the refusal's message and headers speak of: the call, its tier, its keys. */
export interface RefusalContext {
  config: ResolvedConfig;
  tier: TierDef;
  usageType: UsageType;
  /** when the quota window ends (epoch ms) */
  resetsAt: number;
  quote: Quote;
  keys: readonly AdmitKey[];
  keyId: string | null;
  rate: RateHeaders | null;
  now: number;
}

/** The error a refusal answers. */
export function refusalError(refusal: Refusal, c: RefusalContext): AgwError {
  switch (refusal.kind) {
    case 'no-account':
      return new AgwError('UNAUTHORIZED', 'the account of these credentials no longer exists');
    case 'quota':
      return quotaExceeded(c.config, c.tier, c.usageType, refusal.limit, c.resetsAt);
    case 'funds':
      return insufficientFunds(refusal, c.quote, c.config.wallet.selfTopup);
    case 'keyBudget':
      return keyBudgetExceeded(refusal, c.keys.find((k) => k.id === refusal.keyId)!, c.keyId, c.quote, c.now);
    default:
      return rateLimited(refusal, c.rate);
  }
}

/** Headers telling the official SDKs not to retry a refusal that a retry cannot fix. */
const NO_RETRY = { 'x-should-retry': 'false' };

function quotaExceeded(config: ResolvedConfig, tier: TierDef, usageType: UsageType, limit: number, resetsAt: number): AgwError {
  const better = [...config.tiers.values()].find((t) => {
    const l = t.quotas[usageType] ?? 0;
    return t.id !== tier.id && (l < 0 || l > limit);
  });
  const hint = better
    ? `upgrade to the ${better.displayName} tier (${(better.quotas[usageType] ?? 0) < 0 ? 'no cap' : `${better.quotas[usageType]} per month`}) for more`
    : 'ask an administrator to raise your quota';
  return new AgwError(
    'QUOTA_EXCEEDED',
    `${usageType} quota used up: ${limit} per month on the ${tier.displayName} tier, resets at ${new Date(resetsAt).toISOString()}; ${hint}`,
    undefined,
    NO_RETRY,
  );
}

/**
 * 402 INSUFFICIENT_FUNDS for a call whose hold the wallet cannot cover, saying what the
 * call may cost, what is available, and (token-priced) the max_tokens it can afford.
 */
function insufficientFunds(r: Extract<Refusal, { kind: 'funds' }>, quote: Quote, selfTopup: boolean): AgwError {
  const s = r.wallet;
  const available = Math.max(0, s.allowanceRemaining + s.balance - r.held);
  const affordable = maxAffordableTokens(quote, available);
  const inFlight = r.held > 0 ? ` (calls in flight hold ${usdText(r.held)})` : '';
  const more = selfTopup ? 'top up the wallet (POST /api/wallet/topup)' : 'ask an operator for credit (agw admin wallet credit)';
  const fix = affordable !== undefined && affordable >= 1 ? `send max_tokens ≤ ${affordable.toLocaleString('en-US')} or ${more}` : more;
  return new AgwError(
    'INSUFFICIENT_FUNDS',
    `insufficient funds: this request may cost up to ${usdText(quote.nano)} and ${usdText(available)} is available${inFlight}: ${fix}`,
    {
      balance: nanoToUsd(s.balance),
      currency: s.currency,
      monthlyAllowance: nanoToUsd(s.allowance),
      monthlyAllowanceRemaining: nanoToUsd(s.allowanceRemaining),
      held: nanoToUsd(r.held),
      available: nanoToUsd(available),
      required: nanoToUsd(quote.nano),
      ...(affordable !== undefined ? { maxAffordableTokens: affordable } : {}),
    },
    NO_RETRY,
  );
}

function keyBudgetExceeded(r: Extract<Refusal, { kind: 'keyBudget' }>, key: AdmitKey, ownKey: string | null, quote: Quote, now: number): AgwError {
  const end = budgetPeriodEnd(key.limits.budgetPeriod, now);
  const per = key.limits.budgetPeriod === 'total' ? 'in all' : `per ${key.limits.budgetPeriod}`;
  const held = r.held > 0 ? ` and ${usdText(r.held)} held by its calls in flight` : '';
  const whose = key.id === ownKey ? "this key's budget" : `the budget of key ${key.id}, which this key was made with,`;
  const resets = end === null ? "it does not reset: ask the key's owner for a larger budget" : `it resets at ${new Date(end).toISOString()}`;
  return new AgwError(
    'KEY_BUDGET_EXCEEDED',
    `${whose} of ${usdText(r.budget)} ${per} does not cover this request (up to ${usdText(quote.nano)}): ${usdText(r.spent)} spent${held}; ${resets}`,
    {
      keyId: key.id,
      budget: nanoToUsd(r.budget),
      budgetPeriod: key.limits.budgetPeriod,
      spent: nanoToUsd(r.spent),
      held: nanoToUsd(r.held),
      remaining: nanoToUsd(Math.max(0, r.budget - r.spent - r.held)),
      required: nanoToUsd(quote.nano),
      resetsAt: end === null ? null : new Date(end).toISOString(),
    },
    NO_RETRY,
  );
}

function rateLimited(r: Extract<Refusal, { kind: 'rate' }>, rate: RateHeaders | null): AgwError {
  const seconds = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
  return new AgwError(
    'RATE_LIMITED',
    `this key's rate limit of ${r.limit.toLocaleString('en-US')} ${r.which} per minute is reached: retry in ${seconds} s`,
    { limit: r.limit, per: 'minute', which: r.which, retryAfterMs: r.retryAfterMs },
    { ...rateHeaders(rate), 'retry-after': String(seconds), 'retry-after-ms': String(Math.max(1, r.retryAfterMs)) },
  );
}

/** The error with the call's request id as `x-request-id` (the answer's header, CONTRACT "Request log") and the key's rate headers. */
export function withRequestId(err: AgwError, id: string, rate: RateHeaders | null = null): AgwError {
  return new AgwError(err.code, err.message, err.details, { ...rateHeaders(rate), ...err.headers, 'x-request-id': id });
}

/**
 * The x-ratelimit-* headers OpenAI sends (remaining counts the call answered), so the
 * official SDKs see the same thing from agw as from OpenAI.
 */
export function rateHeaders(rate: RateHeaders | null): Record<string, string> {
  if (!rate) return {};
  const out: Record<string, string> = {};
  for (const [which, st] of [['requests', rate.requests], ['tokens', rate.tokens]] as const) {
    if (!st) continue;
    out[`x-ratelimit-limit-${which}`] = String(st.limit);
    out[`x-ratelimit-remaining-${which}`] = String(st.remaining);
    out[`x-ratelimit-reset-${which}`] = resetText(st.resetMs);
  }
  return out;
}
