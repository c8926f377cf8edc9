import type { Logger } from 'pino';
import type { PgDb } from '../../store/postgres.js';
import { isStoreUnavailable } from '../../store/errors.js';
import type { Booking } from '../bookings.js';
import { BOOKING_TYPE, bookingRecords, bookingTypeOid, storableJson } from './booking-row.js';
import { BOOK_FUNCTION } from './book.js';
import { potNames } from './pots.js';
import { monthKey, monthStart } from '../wallets.js';

/** Which of a call's pots it admitted against a slice (the booking consumes those slices). */
export interface Consumed {
  wallet: boolean;
  quota: boolean;
  /** the key budget pots ('3b:…') */
  budgets: string[];
}

interface Queued {
  b: Booking;
  consumed: Consumed;
  /** the daemon epoch whose slices the call was admitted against */
  epoch: string;
  done: (err?: unknown) => void;
}

/** The booking call, with the batch's kept bodies (logs.bodies) and without. */
const BOOK_WITH_BODIES = `SELECT ${BOOK_FUNCTION}($1, $2::${BOOKING_TYPE}[], $3::jsonb, $4) AS n`;
const BOOK = `SELECT ${BOOK_FUNCTION}($1, $2::${BOOKING_TYPE}[], NULL, $3) AS n`;

/** Bookings per agw_book_v16 call at most. */
const MAX_BATCH = 500;
/**
 * Transient failures (deadlock, serialization, a dropped connection) are retried this
 * long. Then a JSON call is answered 503 and costs nothing, and a streamed call, served
 * before its booking, is spooled to disk and booked later (postgres/spool.ts).
 */
const RETRY_FOR_MS = 2000;

/** SQLSTATE of agw_book_v16 / agw_lease_v7 when the daemon's leases were reclaimed. */
export const LEASE_LOST = 'AGW01';
/**
 * SQLSTATE of agw_book_v16 when a batch holds a booking that another transaction wrote since
 * it looked. A batch sent as new (p_probe false) that holds a booking already in the store (a
 * batch that committed before its answer was lost, a spooled booking booked again) fails
 * with unique_violation on usage_records_pkey instead. Either way nothing was written, and the
 * batch is sent again at once with p_probe, which books only what is new.
 */
const BOOKED_BEFORE = 'AGW02';

/**
 * Group commit of settled calls on PostgreSQL: every booking of an event-loop turn, and
 * every booking that arrives while a batch commits, goes into the next agw_book_v16 call
 * (one round trip, one transaction: postgres/book.ts). A call's promise settles once its
 * batch committed, so an answer goes out only when its booking is in the store. Under
 * load a batch holds many calls: far less than one round trip per call.
 */
export class PgBatcher {
  private queue: Queued[] = [];
  private running: Promise<void> | null = null;
  /** the store's OID of agw_booking_v16, which the binary batch names (read at the first batch) */
  private elementOid: number | null = null;
  /** counters for tests and the benchmark */
  readonly stats = { batches: 0, bookings: 0, retries: 0 };

  constructor(
    private readonly db: PgDb,
    private readonly log: Pick<Logger, 'error' | 'warn'>,
    /** right after a batch committed, before its callers resume */
    private readonly committed: (items: readonly { b: Booking; consumed: Consumed; epoch: string }[]) => void,
  ) {}

  /** Queues a booking; resolves when it is committed (rejects when it cannot be). */
  push(b: Booking, consumed: Consumed, epoch: string): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ b, consumed, epoch, done: (err) => (err ? reject(err) : resolve()) });
      this.kick();
    });
  }

  /** Starts the batch loop unless it runs; one queued after the loop's last look starts it again. */
  private kick(): void {
    if (this.running) return;
    this.running = this.run().finally(() => {
      this.running = null;
      if (this.queue.length) this.kick();
    });
  }

  /** Resolves when every queued booking was committed or refused. */
  async drain(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    await new Promise((r) => setImmediate(r)); // the bookings of this turn go together
    while (this.queue.length) {
      const epoch = this.queue[0].epoch;
      const batch: Queued[] = [];
      const rest: Queued[] = [];
      const ids = new Set<string>();
      for (const q of this.queue) {
        // a booking queued twice goes once (the second waits for the next batch, which books nothing twice)
        if (q.epoch === epoch && batch.length < MAX_BATCH && !ids.has(q.b.id)) {
          ids.add(q.b.id);
          batch.push(q);
        } else rest.push(q);
      }
      this.queue = rest;
      await this.apply(epoch, batch);
    }
  }

  private async apply(epoch: string, batch: Queued[]): Promise<void> {
    const started = Date.now();
    // a batch is new on its first try: agw_book_v16 skips looking for its bookings in the store
    for (let probe = false; ; probe = true) {
      try {
        this.elementOid ??= await bookingTypeOid(this.db);
        const rows = bookingRecords(batch.map(row), this.elementOid);
        const bodies = batch.filter((q) => q.b.bodies).map((q) => ({ id: q.b.id, createdAt: q.b.createdAt, ...q.b.bodies }));
        if (bodies.length) {
          // logs.bodies: the kept bodies go with the batch, in the same call (a binary body's NUL as U+FFFD)
          await this.db.call('agw_book_bodies', BOOK_WITH_BODIES, [epoch, rows, JSON.stringify(bodies, storableJson), probe]);
        } else await this.db.call('agw_book', BOOK, [epoch, rows, probe]);
        this.stats.batches++;
        this.stats.bookings += batch.length;
        this.committed(batch);
        for (const q of batch) q.done();
        return;
      } catch (err) {
        const code = (err as { code?: string }).code ?? '';
        // a booking in the store already: the batch wrote nothing, and goes again at once, looking
        const booked = code === BOOKED_BEFORE || (code === '23505' && (err as { constraint?: string }).constraint === 'usage_records_pkey');
        if (booked && Date.now() - started < RETRY_FOR_MS) continue;
        const transient = isTransient(err);
        if (transient && Date.now() - started < RETRY_FOR_MS) {
          this.stats.retries++;
          await new Promise((r) => setTimeout(r, 20 + Math.random() * 80));
          continue; // idempotent by usage id: a batch that did commit books nothing twice
        }
        if (batch.length > 1 && !transient && code !== LEASE_LOST) {
          // one booking refuses (its account was deleted, say): the others go on their own
          await Promise.all(batch.map((q) => this.apply(epoch, [q])));
          return;
        }
        if (code === '23503') {
          this.log.warn({ usageId: batch[0].b.id }, 'booking of a deleted account dropped');
          for (const q of batch) q.done();
          return;
        }
        this.log.error({ err, bookings: batch.length }, 'a booking batch could not be committed');
        for (const q of batch) q.done(err);
        return;
      }
    }
  }
}

/**
 * A failure that may pass: a deadlock, a serialization failure, a statement cancelled by its
 * timeout (a batch that waited on a lock, say a migration building an index: it committed
 * nothing), a store out of reach.
 */
export function isTransient(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? '';
  return code === '40001' || code === '40P01' || code === '57014' || isStoreUnavailable(err);
}

/** A booking as agw_book_v16 reads it: the Booking, its place, its month, the slices it consumed. */
function row(q: Queued, ord: number) {
  return {
    ...q.b,
    bodies: undefined, // sent apart
    ord,
    month: monthKey(q.b.settledAt),
    monthStart: monthStart(q.b.settledAt),
    leasedWallet: q.consumed.wallet,
    leasedQuota: q.consumed.quota,
    budgets: q.b.budgets.map((kb) => ({ ...kb, leased: q.consumed.budgets.includes(potNames.budget(kb.keyId, kb.period)) })),
  };
}
