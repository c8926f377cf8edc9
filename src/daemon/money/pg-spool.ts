import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Booking } from './bookings.js';

/** How often spooled bookings are tried again. */
export const SPOOL_RETRY_MS = 5000;

/**
 * Bookings of streamed calls that PostgreSQL could not take (pg-batch.ts gave up after
 * its retries): the stream's content went out before its booking, so the call was
 * served and must be billed. Each is appended to a file of this daemon in
 * `<data>/pg-spool/` and synced before the stream ends, then booked again every few
 * seconds and at the next start (from no slice: its slices went back with the lease;
 * idempotent by usage id, so a booking that did land is not booked twice). A file is
 * deleted once every booking in it was booked. Files of daemons no longer running on
 * this machine are taken over by the next daemon that starts on the same data directory.
 */
export class PgSpool {
  private readonly dir: string;
  private readonly own: string;
  private claims = 0;
  /** appends and replays of this daemon, one at a time */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    dataDir: string,
    private readonly log: Pick<Logger, 'warn' | 'error'>,
  ) {
    this.dir = join(dataDir, 'pg-spool');
    this.own = `${process.pid}-${Date.now()}`;
  }

  /** Appends `b` to this daemon's file and syncs it. */
  add(b: Booking): Promise<void> {
    return this.serial(async () => {
      await mkdir(this.dir, { recursive: true });
      const f = await open(join(this.dir, `${this.own}.jsonl`), 'a', 0o600);
      try {
        await f.write(`${JSON.stringify({ ...b, bodies: undefined })}\n`);
        await f.datasync();
      } finally {
        await f.close();
      }
      this.log.warn({ usageId: b.id }, 'PostgreSQL could not take the booking of a served call: spooled to disk, booked when it can');
    });
  }

  /**
   * Books every spooled booking this daemon may take (its own, and those of daemons that
   * no longer run here); a file goes once all of its bookings were booked. Returns how
   * many were booked.
   */
  replay(book: (b: Booking) => Promise<void>): Promise<number> {
    return this.serial(async () => {
      let names: string[];
      try {
        names = await readdir(this.dir);
      } catch {
        return 0; // nothing was ever spooled here
      }
      let booked = 0;
      for (const name of names.filter((n) => n.endsWith('.jsonl'))) {
        const owner = Number(name.split('-')[0]);
        const mine = name.startsWith(`${this.own}.`) || name.startsWith(`${this.own}-`);
        // another daemon's, unless it stopped (a pid equal to ours is an earlier process's)
        if (!mine && owner !== process.pid && alive(owner)) continue;
        // take the file over (a rename is atomic: of two daemons starting at once one wins;
        // this daemon's next spooled booking starts a new file of its own)
        const claimed = join(this.dir, `${this.own}-claim${++this.claims}.jsonl`);
        try {
          await rename(join(this.dir, name), claimed);
        } catch {
          continue;
        }
        const lines = (await readFile(claimed, 'utf8')).split('\n').filter((l) => l.trim());
        const left: string[] = [];
        for (const line of lines) {
          let b: Booking;
          try {
            b = JSON.parse(line) as Booking;
          } catch {
            continue; // a line torn by a crash mid-write: its call's stream never ended
          }
          try {
            await book(b);
            booked++;
          } catch (err) {
            left.push(line);
            this.log.error({ err, usageId: b.id }, 'a spooled booking could not be booked yet');
          }
        }
        if (left.length) {
          // what is left goes back to this daemon's own file, tried again at the next round
          const f = await open(join(this.dir, `${this.own}.jsonl`), 'a', 0o600);
          try {
            await f.write(left.map((l) => `${l}\n`).join(''));
            await f.datasync();
          } finally {
            await f.close();
          }
        }
        await unlink(claimed);
      }
      return booked;
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(() => undefined);
    return next;
  }
}

function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
