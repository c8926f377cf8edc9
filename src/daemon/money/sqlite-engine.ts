import type { TierDef } from '../../shared/config/defaults.js';
import { usdToNano } from '../../shared/money.js';
import type { Booking } from './bookings.js';
import type { AdmitRequest, Held, MoneyEngine, Refusal } from './engine.js';
import type { Ledger } from './sqlite-ledger.js';
import { walletState, type WalletState } from './wallets.js';

/**
 * The SQLite store's money engine: its one daemon admits against the store itself (the
 * whole account is its "lease"), through the booking ledger. Admission is one
 * synchronous read-check-hold step (Ledger.admit), so parallel calls cannot interleave.
 */
export class SqliteMoney implements MoneyEngine {
  constructor(private readonly ledger: Ledger) {}

  async admit(r: AdmitRequest): Promise<Refusal | null> {
    let refusal: Refusal | null = null;
    const ok = await this.ledger.admit(
      r.userId,
      r.usageType,
      r.periodKey,
      (w, heldUnits, pendingNano, heldNano) => {
        if (!w) {
          refusal = { kind: 'no-account' };
          return false;
        }
        const limit = w.quota_override !== null ? Number(w.quota_override) : (r.tier.quotas[r.usageType as keyof typeof r.tier.quotas] ?? 0);
        if (limit === 0 || (limit > 0 && Number(w.quota_used ?? 0) + heldUnits >= limit)) {
          refusal = { kind: 'quota', limit };
          return false;
        }
        const s = lessPending(walletState(w, usdToNano(r.tier.monthlyAllowance), r.now), pendingNano);
        if (s.unlimited) return 0; // no holds on an unlimited wallet
        if (s.allowanceRemaining + s.balance - heldNano < r.holdNano) {
          refusal = { kind: 'funds', wallet: s, held: heldNano };
          return false;
        }
        return r.holdNano;
      },
      r.storeVersion,
    );
    return ok ? null : refusal;
  }

  async reserveFunds(userId: string, tier: TierDef, nano: number, now: number): Promise<{ refusal: Refusal } | { held: number }> {
    let refusal: Refusal = { kind: 'no-account' };
    let held = 0;
    const ok = await this.ledger.admit(userId, null, '', (w, _units, pendingNano, heldNano) => {
      if (!w) return false;
      const s = lessPending(walletState(w, usdToNano(tier.monthlyAllowance), now), pendingNano);
      if (s.unlimited) return 0;
      if (s.allowanceRemaining + s.balance - heldNano < nano) {
        refusal = { kind: 'funds', wallet: s, held: heldNano };
        return false;
      }
      return (held = nano);
    });
    return ok ? { held } : { refusal };
  }

  releaseFunds(userId: string, held: number): void {
    this.ledger.unholdMoney(userId, held);
  }

  settle(b: Booking): Promise<void> {
    return this.ledger.settle(b);
  }

  record(b: Booking): void {
    void this.ledger.settle(b).catch(() => undefined);
  }

  async heldBy(userId: string): Promise<Held> {
    return this.ledger.heldBy(userId);
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
