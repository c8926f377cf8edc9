import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Booking } from '../bookings.js';
import type { Consumed } from './batches.js';

/** How often spooled bookings are tried again (and a daemon says it is alive). */
export const SPOOL_RETRY_MS = 5000;
/** A spool whose daemon has not said it is alive for this long is taken over. */
const STALE_MS = 60_000;

/** A spooled booking: the call, and the slices it was admitted against (under `epoch`). */
export interface Spooled {
  b: Booking;
  consumed: Consumed;
  epoch: string;
}

/**
 * Bookings of streamed calls that PostgreSQL could not take (postgres/batches.ts gave up after
 * its retries): the stream's content went out before its booking, so the call was
 * served and must be billed. Each is appended to this daemon's file in `<data>/pg-spool/`
 * and synced before the stream ends, then booked again every few seconds and at the next
 * start (idempotent by usage id: a booking that did land is not booked twice).
 *
 * Files are named after a random id per daemon process, and each daemon touches
 * `<id>.alive` at every round; the files of a daemon silent for a minute are taken over by
 * a rename (atomic: of two daemons one wins), so daemons sharing a data directory, even
 * on several machines or in containers, leave each other's files alone. A round stops at
 * the first booking that fails and writes what is left back into the file it took.
 */
export class PgSpool {
  private readonly dir: string;
  private readonly own = randomUUID();
  private claims = 0;
  /** appends to this daemon's file, and taking that file for a round, one at a time */
  private fileLock: Promise<unknown> = Promise.resolve();
  private round: Promise<number> | null = null;

  constructor(
    dataDir: string,
    private readonly log: Pick<Logger, 'warn' | 'error'>,
  ) {
    this.dir = join(dataDir, 'pg-spool');
  }

  /** Appends a booking to this daemon's file and syncs it. */
  add(s: Spooled): Promise<void> {
    return this.withFile(async () => {
      await mkdir(this.dir, { recursive: true });
      await this.touch();
      await appendSynced(join(this.dir, `${this.own}.jsonl`), `${JSON.stringify(s)}\n`);
      this.log.warn({ usageId: s.b.id }, 'PostgreSQL could not take the booking of a served call: spooled to disk, booked when it can');
    });
  }

  /**
   * One round: books what this daemon spooled and what silent daemons left. A round
   * already running is not started again. Returns how many bookings were booked.
   */
  replay(book: (s: Spooled) => Promise<void>): Promise<number> {
    this.round ??= this.replayOnce(book).finally(() => {
      this.round = null;
    });
    return this.round;
  }

  /** Waits for a round that is running. */
  async idle(): Promise<void> {
    await this.round?.catch(() => 0);
  }

  private async replayOnce(book: (s: Spooled) => Promise<void>): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return 0; // nothing was ever spooled here
    }
    await this.touch();
    let booked = 0;
    // `<id>.jsonl`: a daemon's own file; `<id>~<n>.jsonl`: a file daemon <id> took for a round
    const ownerOf = (name: string) => name.split(/[.~]/)[0];
    for (const name of names.filter((n) => n.endsWith('.jsonl'))) {
      const owner = ownerOf(name);
      if (owner !== this.own && !(await this.silent(owner))) continue;
      let file = join(this.dir, name);
      if (owner !== this.own || name === `${this.own}.jsonl`) {
        // take it: new appends of its writer (this daemon, or none) start a new file
        const claimed = join(this.dir, `${this.own}~${++this.claims}.jsonl`);
        if (!(await this.withFile(() => rename(file, claimed).then(() => true, () => false)))) continue;
        file = claimed;
      }
      const r = await this.bookFile(file, book);
      booked += r.booked;
      if (r.stopped) return booked; // the store still refuses: the next round goes on
    }
    // the marks of daemons that left nothing behind
    for (const name of names.filter((n) => n.endsWith('.alive'))) {
      const owner = ownerOf(name);
      if (owner !== this.own && !names.some((n) => n.endsWith('.jsonl') && ownerOf(n) === owner) && (await this.silent(owner))) {
        await unlink(join(this.dir, name)).catch(() => undefined);
      }
    }
    return booked;
  }

  /** Books a taken file's lines in order; stops at the first failure and keeps the rest in it. */
  private async bookFile(file: string, book: (s: Spooled) => Promise<void>): Promise<{ booked: number; stopped: boolean }> {
    const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l.trim());
    let booked = 0;
    for (let i = 0; i < lines.length; i++) {
      let s: Spooled;
      try {
        s = JSON.parse(lines[i]) as Spooled;
      } catch {
        continue; // a line torn by a crash mid-write: its stream never ended
      }
      if (typeof s?.b?.id !== 'string' || !s.consumed) continue; // not a spooled booking
      try {
        await book(s);
        booked++;
      } catch (err) {
        this.log.error({ err, usageId: s.b.id }, 'a spooled booking could not be booked yet: tried again in a few seconds');
        // what is left replaces the file at once (write, then rename over it)
        const tmp = `${file}.tmp`;
        await writeFile(tmp, lines.slice(i).map((l) => `${l}\n`).join(''), { mode: 0o600, flush: true });
        await rename(tmp, file);
        return { booked, stopped: true };
      }
    }
    await unlink(file);
    return { booked, stopped: false };
  }

  /** Whether the daemon `owner` has not said it is alive for STALE_MS. */
  private async silent(owner: string): Promise<boolean> {
    try {
      return Date.now() - (await stat(join(this.dir, `${owner}.alive`))).mtimeMs > STALE_MS;
    } catch {
      return true;
    }
  }

  private async touch(): Promise<void> {
    await writeFile(join(this.dir, `${this.own}.alive`), '', { mode: 0o600 }).catch(() => undefined);
  }

  private withFile<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.fileLock.then(fn, fn);
    this.fileLock = next.catch(() => undefined);
    return next;
  }
}

async function appendSynced(path: string, text: string): Promise<void> {
  const f = await open(path, 'a', 0o600);
  try {
    await f.write(text);
    await f.datasync();
  } finally {
    await f.close();
  }
}
