import { randomBytes } from 'node:crypto';
import type { TierDef } from '../../../shared/config/defaults.js';
import { usdToNano } from '../../../shared/money.js';
import type { Booking } from '../bookings.js';
import { Buckets } from './buckets.js';
import type { AdmitKey, AdmitRequest, Held, MoneyEngine, RateHeaders, Refusal } from '../engine.js';
import type { AdmissionRow, Ledger } from './ledger.js';
import { spokenPots, type PotAmount, type Spoken } from './spoken.js';
import { walletState, type WalletState } from '../wallets.js';

/** What an admitted call took from its key's token bucket (given back beyond its use at settlement). */
interface TokenHold {
  keyId: string;
  tpm: number;
  tokens: number;
}

/**
 * The SQLite store's money engine: its one daemon admits against the store itself (the
 * whole account is its "lease"), through the booking ledger. Admission is one
 * synchronous read-check-hold step (Ledger.admit) covering the quota, the wallet, the
 * key's budget and its rate buckets, so parallel calls cannot interleave.
 */
export class SqliteMoney implements MoneyEngine {
  private readonly buckets = new Buckets();
  private readonly tokenHolds = new Map<string, TokenHold[]>();

  constructor(private readonly ledger: Ledger) {}

  async admit(r: AdmitRequest): Promise<Refusal | null> {
    let refusal: Refusal | null = null;
    const budgeted = r.keys.filter((k) => k.period !== null);
    const ok = await this.ledger.admit(
      r.id,
      r.userId,
      r.usageType,
      r.periodKey,
      budgeted.map((k) => ({ keyId: k.id, period: k.period! })),
      (w, spoken) => {
        if (!w) {
          refusal = { kind: 'no-account' };
          return false;
        }
        // the keys' rates first: a call over a rate takes nothing else
        for (const key of r.keys) {
          refusal = this.rateShort(key, r.tokens, r.now);
          if (refusal) return false;
        }
        const unitsPot = spokenPots.units(r.userId, r.usageType, r.periodKey);
        const limit = w.quota_override !== null ? Number(w.quota_override) : (r.tier.quotas[r.usageType as keyof TierDef['quotas']] ?? 0);
        if (limit === 0 || (limit > 0 && Number(w.quota_used ?? 0) + spoken.of(unitsPot) >= limit)) {
          refusal = { kind: 'quota', limit };
          return false;
        }
        const holds: PotAmount[] = [[unitsPot, 1]];
        for (const [i, key] of budgeted.entries()) {
          const pot = spokenPots.budget(key.id, key.period!);
          const budget = key.limits.budgetNano!;
          const spent = w.keySpent[i] + spoken.pendingOf(pot);
          const held = spoken.heldOf(pot).amount;
          if (spent + held + r.holdNano > budget) {
            refusal = { kind: 'keyBudget', keyId: key.id, budget, spent, held };
            return false;
          }
          holds.push([pot, r.holdNano]);
        }
        const funds = this.funds(w, r.tier, r.now, spoken, r.holdNano);
        if (funds.refusal) {
          refusal = funds.refusal;
          return false;
        }
        if (funds.hold) holds.push([spokenPots.wallet(r.userId), funds.hold]);
        for (const key of r.keys) this.takeRates(r.id, key, r.tokens, r.now);
        return holds;
      },
      r.storeVersion,
    );
    return ok ? null : refusal;
  }

  /** Whether the wallet covers `nano` beyond what is spoken for; the hold to take (none on an unlimited wallet). */
  private funds(w: AdmissionRow, tier: TierDef, now: number, spoken: Spoken, nano: number): { hold: number; refusal?: Refusal } {
    const pot = spokenPots.wallet(w.user_id);
    const s = lessPending(walletState(w, usdToNano(tier.monthlyAllowance), now), spoken.pendingOf(pot));
    if (s.unlimited) return { hold: 0 };
    const held = spoken.heldOf(pot).amount;
    if (s.allowanceRemaining + s.balance - held < nano) return { hold: 0, refusal: { kind: 'funds', wallet: s, held } };
    return { hold: nano };
  }

  private rateShort(key: AdmitKey, tokens: number, now: number): Refusal | null {
    const { rpm, tpm } = key.limits;
    if (rpm !== null && !this.buckets.has(`r:${key.id}`, rpm, 1, now)) {
      return { kind: 'rate', which: 'requests', limit: rpm, retryAfterMs: this.buckets.waitMs(`r:${key.id}`, rpm, 1, now) };
    }
    if (tpm !== null && !this.buckets.has(`t:${key.id}`, tpm, Math.min(tokens, tpm), now)) {
      return { kind: 'rate', which: 'tokens', limit: tpm, retryAfterMs: this.buckets.waitMs(`t:${key.id}`, tpm, Math.min(tokens, tpm), now) };
    }
    return null;
  }

  private takeRates(id: string, key: AdmitKey, tokens: number, now: number): void {
    const { rpm, tpm } = key.limits;
    if (rpm !== null) this.buckets.take(`r:${key.id}`, rpm, 1, now);
    if (tpm !== null) {
      // a call bigger than the whole window may run when the window is full; it empties it
      const n = Math.min(tokens, tpm);
      this.buckets.take(`t:${key.id}`, tpm, n, now);
      const list = this.tokenHolds.get(id);
      if (list) list.push({ keyId: key.id, tpm, tokens: n });
      else this.tokenHolds.set(id, [{ keyId: key.id, tpm, tokens: n }]);
    }
  }

  rateOf(key: AdmitKey, now: number): RateHeaders {
    const { rpm, tpm } = key.limits;
    return {
      ...(rpm !== null ? { requests: this.buckets.state(`r:${key.id}`, rpm, now) } : {}),
      ...(tpm !== null ? { tokens: this.buckets.state(`t:${key.id}`, tpm, now) } : {}),
    };
  }

  async reserveFunds(userId: string, tier: TierDef, nano: number, now: number): Promise<{ refusal: Refusal } | { release(): void }> {
    let refusal: Refusal = { kind: 'no-account' };
    const id = `funds_${randomBytes(6).toString('hex')}`;
    const ok = await this.ledger.admit(id, userId, null, '', [], (w, spoken) => {
      if (!w) return false;
      const funds = this.funds(w, tier, now, spoken, nano);
      if (funds.refusal) {
        refusal = funds.refusal;
        return false;
      }
      return funds.hold ? [[spokenPots.wallet(userId), funds.hold]] : [];
    });
    return ok ? { release: () => this.ledger.release(id, userId) } : { refusal };
  }

  settle(b: Booking): Promise<void> {
    const holds = this.tokenHolds.get(b.id);
    if (holds) {
      // the tokens the call did not use go back to its keys' windows
      this.tokenHolds.delete(b.id);
      const used = b.status === 'finalized' ? b.promptTokens + b.completionTokens : 0;
      for (const t of holds) if (t.tokens > used) this.buckets.give(`t:${t.keyId}`, t.tpm, t.tokens - used, Date.now());
    }
    return this.ledger.settle(b);
  }

  record(b: Booking): Promise<void> {
    return this.ledger.settle(b).catch(() => undefined);
  }

  async heldBy(userId: string): Promise<Held> {
    const h = this.ledger.spoken.heldOf(spokenPots.wallet(userId));
    return { nano: h.amount, calls: h.calls };
  }

  close(): Promise<void> {
    return Promise.resolve(); // the ledger closes with its store
  }
}

/** A wallet state with debits not applied to the store yet taken off (allowance first). */
export function lessPending(s: WalletState, pending: number): WalletState {
  if (!pending || s.unlimited) return s;
  const fromAllowance = Math.min(s.allowanceRemaining, pending);
  return {
    ...s,
    allowanceUsed: s.allowanceUsed + fromAllowance,
    allowanceRemaining: s.allowanceRemaining - fromAllowance,
    balance: s.balance - (pending - fromAllowance),
  };
}
