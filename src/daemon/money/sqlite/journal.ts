import Database from 'better-sqlite3';
import { closeSync, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { Booking } from '../bookings.js';
import { StoreOpenError } from '../../store/errors.js';

/**
 * The booking journal: an append-only file next to agw.db (`agw.db-bookings`) holding
 * settled gateway calls that are not applied to the store yet. One booking = one line,
 * `CRC32(json) json\n`; the bookings settled in one turn of the event loop are written with
 * one write(2) before any of their clients sees the answer: once
 * the call returns, the booking survives the process being killed (it is in the kernel's
 * page cache, the same guarantee as a SQLite commit with synchronous=NORMAL). Reading
 * skips lines whose checksum does not match (a write torn by a power loss).
 *
 * Only the daemon writes it, and only one daemon per data directory: `lockDataDir` holds
 * an exclusive SQLite lock on `agw.db-daemon.lock` for the process's lifetime (the
 * operating system drops it when the process dies, however it dies).
 */
/** A line's checksum field: the CRC32 of its JSON, 8 hex digits. */
const checksum = (json: string) => crc32(json).toString(16).padStart(8, '0');

export class BookingJournal {
  private readonly fd: number;
  /** bytes in the file */
  size: number;
  private walFd: number | null = null;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'a+', 0o600);
    this.size = fstatSync(this.fd).size;
  }

  /**
   * Appends bookings (those settled in one turn of the event loop, or one alone) with one
   * write(2); throws, leaving the file as it was, when they cannot be written whole.
   */
  append(bookings: readonly Booking[]): void {
    let lines = '';
    for (const b of bookings) {
      const json = JSON.stringify(b);
      lines += `${checksum(json)} ${json}\n`;
    }
    const bytes = Buffer.byteLength(lines);
    let written = 0;
    try {
      // the string as it is (no Buffer per write); a short write is undone below
      written = writeSync(this.fd, lines);
      if (written !== bytes) throw new Error(`booking journal: ${written} of ${bytes} bytes written`);
    } catch (e) {
      if (written > 0) ftruncateSync(this.fd, this.size); // no torn line in front of the next one
      throw e;
    }
    this.size += bytes;
  }

  /** Every intact booking in the file, in order. */
  readAll(): Booking[] {
    const size = fstatSync(this.fd).size;
    const buf = Buffer.alloc(size);
    let off = 0;
    while (off < size) {
      const n = readSync(this.fd, buf, off, size - off, off);
      if (n === 0) break;
      off += n;
    }
    const out: Booking[] = [];
    for (const line of buf.subarray(0, off).toString('utf8').split('\n')) {
      const sp = line.indexOf(' ');
      if (sp !== 8) continue;
      const json = line.slice(9);
      if (checksum(json) !== line.slice(0, 8)) continue;
      try {
        out.push(upgrade(JSON.parse(json) as Partial<Booking>));
      } catch {
        /* a checksum collision on garbage: skip it */
      }
    }
    return out;
  }

  /**
   * Empties the file once everything in it is applied. The store's WAL is synced first:
   * the applied bookings must not exist only in a WAL that a power loss could take back
   * after the journal holding them is gone.
   */
  truncate(walPath: string): void {
    try {
      this.walFd ??= openSync(walPath, 'r');
      fdatasyncSync(this.walFd);
    } catch {
      /* no WAL file (checkpointed and removed): nothing to sync */
    }
    ftruncateSync(this.fd, 0);
    this.size = 0;
  }

  close(): void {
    closeSync(this.fd);
    if (this.walFd !== null) closeSync(this.walFd);
  }
}

/**
 * A booking as this version writes it, from a line an older version wrote (before holds
 * and the request log: those fields default to what such a call had).
 */
function upgrade(b: Partial<Booking>): Booking {
  const finalized = b.status === 'finalized';
  return {
    keyId: null,
    budgets: [],
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    droppedParams: null,
    holdNano: b.customerNano ?? 0,
    writtenOffNano: 0,
    stream: false,
    answerStatus: finalized ? (b.httpStatus ?? 200) : 503,
    errorCode: null,
    latencyMs: null,
    ttfbMs: null,
    attempts: 1,
    ...b,
  } as Booking;
}

/**
 * Claims the data directory for this process: an exclusive lock on a small SQLite file,
 * held until `release()` or the process's end. A second daemon on the same directory is
 * refused with a clear message (one SQLite store has one daemon; several daemons share
 * PostgreSQL).
 */
export function lockDataDir(dbFile: string): { release(): void } {
  const lock = new Database(`${dbFile}-daemon.lock`);
  try {
    lock.pragma('locking_mode = EXCLUSIVE');
    lock.pragma('busy_timeout = 0');
    lock.exec('CREATE TABLE IF NOT EXISTS holder (pid INTEGER)');
    lock.exec('BEGIN EXCLUSIVE');
    lock.prepare('DELETE FROM holder').run();
    lock.prepare('INSERT INTO holder VALUES (?)').run(process.pid);
    lock.exec('COMMIT');
  } catch (e) {
    lock.close();
    const code = (e as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      throw new StoreOpenError(
        'STORE_IN_USE',
        `another agw daemon is already serving the store ${dbFile}`,
        'stop that daemon first, or give this one its own --data directory (several daemons share a PostgreSQL store: see docs/scale-out.md)',
      );
    }
    throw e;
  }
  return { release: () => lock.open && lock.close() };
}
