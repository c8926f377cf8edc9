import type { Booking } from '../bookings.js';

/** One hold of an admitted call: this much of this pot. */
export type PotAmount = readonly [pot: string, amount: number];

/**
 * What the SQLite daemon knows beyond its store, per pot: the holds of calls admitted
 * and not settled (TigerBeetle's pending debits), and what settled calls booked in the
 * journal but not applied yet. Admission counts both against what the store says; a
 * call's holds are kept by its usage id, so it releases exactly what it took, once.
 *
 * Pots: 'u:<user>:<usage type>:<period>' quota units, 'w:<user>' wallet (nano-USD),
 * 'b:<key>:<budget period>' a key's budget (nano-USD).
 */
export class Spoken {
  private readonly held = new Map<string, { amount: number; calls: number }>();
  private readonly pending = new Map<string, number>();
  private readonly calls = new Map<string, readonly PotAmount[]>();

  /** Held by calls in flight plus booked and not applied: what the store does not show yet. */
  of(pot: string): number {
    return (this.held.get(pot)?.amount ?? 0) + (this.pending.get(pot) ?? 0);
  }

  heldOf(pot: string): { amount: number; calls: number } {
    const h = this.held.get(pot);
    return h ? { amount: h.amount, calls: h.calls } : { amount: 0, calls: 0 };
  }

  /** Calls admitted and not settled (holding, or admitted for nothing). */
  get inFlight(): number {
    return this.calls.size;
  }

  pendingOf(pot: string): number {
    return this.pending.get(pot) ?? 0;
  }

  /** Takes an admitted call's holds. */
  take(id: string, holds: readonly PotAmount[]): void {
    this.calls.set(id, holds);
    for (const [pot, amount] of holds) {
      const h = this.held.get(pot);
      if (h) {
        h.amount += amount;
        h.calls++;
      } else this.held.set(pot, { amount, calls: 1 });
    }
  }

  /** Releases a call's holds (once); what it `booked` counts as pending until `applied`. */
  settle(id: string, booked: readonly PotAmount[]): void {
    const holds = this.calls.get(id);
    if (holds) {
      this.calls.delete(id);
      for (const [pot, amount] of holds) {
        const h = this.held.get(pot);
        if (!h) continue;
        h.amount -= amount;
        if (--h.calls <= 0) this.held.delete(pot);
      }
    }
    for (const [pot, amount] of booked) if (amount) this.pending.set(pot, (this.pending.get(pot) ?? 0) + amount);
  }

  /** What a booking counted as pending is in the store now. */
  applied(booked: readonly PotAmount[]): void {
    for (const [pot, amount] of booked) {
      if (!amount) continue;
      const left = (this.pending.get(pot) ?? 0) - amount;
      if (left > 0) this.pending.set(pot, left);
      else this.pending.delete(pot);
    }
  }
}

export const spokenPots = {
  units: (userId: string, usageType: string, period: string) => `u:${userId}:${usageType}:${period}`,
  wallet: (userId: string) => `w:${userId}`,
  budget: (keyId: string, period: string) => `b:${keyId}:${period}`,
};

/** What a booking adds to its pots once settled: a finalized call's unit, charge and key spend. */
export function bookedOf(b: Booking): PotAmount[] {
  if (b.status !== 'finalized') return [];
  const out: PotAmount[] = [
    [spokenPots.units(b.userId, b.usageType, b.periodKey), 1],
    [spokenPots.wallet(b.userId), b.customerNano],
  ];
  for (const kb of b.budgets) out.push([spokenPots.budget(kb.keyId, kb.period), b.customerNano]);
  return out;
}
