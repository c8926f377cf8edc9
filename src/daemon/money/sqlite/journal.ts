import Database from 'better-sqlite3';
import { closeSync, constants, fdatasyncSync, fstatSync, ftruncateSync, openSync, readSync, statfsSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { Booking } from '../bookings.js';
import { StoreOpenError } from '../../store/errors.js';
import { mappedFiles, type MappedFiles } from '../../store/mapped-file.js';

/**
 * The booking journal: a file next to agw.db (`agw.db-bookings`) holding settled gateway
 * calls that are not applied to the store yet. One booking = one line, `CRC32(json) json\n`;
 * the bookings settled in one turn of the event loop are written together before any of
 * their clients sees the answer: once the call returns, the booking survives the process
 * being killed (it is in the kernel's page cache, the same guarantee as a SQLite commit with
 * synchronous=NORMAL). Reading skips lines whose checksum does not match (a write torn by
 * a power loss, or by the process killed while it copied a line).
 *
 * The file is mapped into memory where the native helper is built (store/mapped-file.ts):
 * a line is a memory copy into the file's page cache, no write(2) on the call's path. The
 * mapping has room reserved on disk ahead of the lines (posix_fallocate, so a copy never
 * lacks a block), which reads as NUL bytes: a killed daemon leaves its lines followed by
 * NULs, a daemon that stops leaves its lines only. Pages written are given back to the
 * system every 256 KiB, so the journal holds at most that much of the daemon's memory, and
 * the pages readied ahead of the lines (`touchAhead`, up to 16 KiB more).
 * Without the helper, one write(2) per turn, at the end of the lines.
 *
 * Only the daemon writes it, and only one daemon per data directory: `lockDataDir` holds
 * an exclusive SQLite lock on `agw.db-daemon.lock` for the process's lifetime (the
 * operating system drops it when the process dies, however it dies).
 */
/** A line's checksum field: the CRC32 of its JSON, 8 hex digits. */
const checksum = (json: string) => crc32(json).toString(16).padStart(8, '0');

/** Room a mapped journal starts with and grows by (at least); it grows by what it holds, 64 MiB at most. */
const MIB = 1024 * 1024;
const MAX_STEP = 64 * MIB;
/**
 * Filesystems where the blocks posix_fallocate reserved are written in place, so a copy into
 * the mapping never needs a block it could lack (a fault there would be SIGBUS, not an
 * error): ext2/3/4, XFS, tmpfs. Copy-on-write ones (btrfs, ZFS) allocate on every write:
 * the journal uses write(2) there.
 */
const MAPPABLE = new Set([0xef53, 0x58465342, 0x01021994]);
/** Written pages are given back to the system each time the lines cross a multiple of this (~500 calls). */
const GIVE_BACK = 256 * 1024;
/** Pages of a mapped journal made writable ahead of its lines, after the call that wrote them. */
const TOUCH_AHEAD = 16 * 1024;
const PAGE = 4096;

export class BookingJournal {
  private readonly fd: number;
  /** bytes of lines in the file (a mapped file's reserved room after them reads as NULs) */
  size: number;
  private walFd: number | null = null;
  private readonly native: MappedFiles | null;
  /** the file mapped, its length the room reserved; null: lines written with write(2) */
  private map: Buffer | null = null;
  /** the file ends in a line cut short (a killed daemon's): the next lines start on a line of their own */
  private torn: boolean;
  /** the mapping's pages below this offset have been written through it (a copy there takes no page fault) */
  private touched = 0;
  private touching = false;

  constructor(readonly path: string) {
    this.fd = openSync(path, constants.O_RDWR | constants.O_CREAT, 0o600);
    this.size = linesEnd(this.fd);
    this.torn = this.size > 0 && lastByte(this.fd, this.size) !== 0x0a;
    this.native = mappableFs(path) ? mappedFiles() : null;
    if (this.native) this.map = this.mapped(Math.max(MIB, roundUp(fstatSync(this.fd).size)));
  }

  /** Whether lines are copied into a mapping (true) or written with write(2) (false). */
  get isMapped(): boolean {
    return this.map !== null;
  }

  /**
   * Appends bookings (those settled in one turn of the event loop, or one alone); throws,
   * leaving what the file held before intact, when they cannot be written whole.
   */
  append(bookings: readonly Booking[]): void {
    let lines = this.torn ? '\n' : '';
    for (const b of bookings) {
      const json = JSON.stringify(b);
      lines += `${checksum(json)} ${json}\n`;
    }
    const bytes = Buffer.byteLength(lines);
    const end = this.size + bytes;
    if (this.map) {
      if (end > this.map.length) this.grow(end);
      if (this.map!.write(lines, this.size) !== bytes) throw new Error(`booking journal: the mapping took less than ${bytes} bytes`);
      // written pages leave the daemon's memory (the data stays in the file)
      if (Math.floor(end / GIVE_BACK) !== Math.floor(this.size / GIVE_BACK)) this.giveBack(this.size - (this.size % GIVE_BACK), end - (end % GIVE_BACK));
      this.size = end;
      this.torn = false;
      if (end + TOUCH_AHEAD / 2 > this.touched && !this.touching) {
        this.touching = true;
        setImmediate(this.touchAhead);
      }
      return;
    }
    let written = 0;
    try {
      // the string as it is (no Buffer per write), after the lines; a short write is undone below
      written = writeSync(this.fd, lines, this.size);
      if (written !== bytes) throw new Error(`booking journal: ${written} of ${bytes} bytes written`);
    } catch (e) {
      if (written > 0) ftruncateSync(this.fd, this.size); // no torn line in front of the next one
      throw e;
    }
    this.size = end;
    this.torn = false;
  }

  /**
   * The first copy into a page of the mapping is a page fault (the kernel readies a page of
   * the file for writing: one every five or so calls, about a page's worth of lines), which
   * would be taken on the call's path, before its answer. After the turn that wrote the lines,
   * the pages ahead of them are written once, each byte as it was, so the next lines are a
   * plain memory copy. Calls one at a time: their answers are out by then. Under load the
   * lines of the next turn come right after it, where their copy would have taken the fault.
   * A page the kernel has written back since (after ~30 s without lines) faults once more.
   */
  private readonly touchAhead = (): void => {
    this.touching = false;
    const map = this.map;
    if (!map) return;
    // whole pages: `touched` never claims a page it did not write (the mapping's length is whole MiBs)
    const to = Math.min(map.length, roundUp(this.size + TOUCH_AHEAD, PAGE));
    for (let off = Math.max(this.touched, this.size - (this.size % PAGE)); off < to; off += PAGE) map[off] = map[off];
    this.touched = Math.max(this.touched, to);
  };

  /** Every intact booking in the file, in order. */
  readAll(): Booking[] {
    // the lines only: a mapped journal's reserved room after them is NULs
    const size = this.size;
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
   * after the journal holding them is gone. A mapped journal starts again with a MiB of room.
   */
  truncate(walPath: string): void {
    try {
      this.walFd ??= openSync(walPath, 'r');
      fdatasyncSync(this.walFd);
    } catch {
      /* no WAL file (checkpointed and removed): nothing to sync */
    }
    this.unmap();
    ftruncateSync(this.fd, 0);
    this.size = 0;
    this.torn = false;
    this.touched = 0;
    if (this.native) this.map = this.mapped(MIB);
  }

  /** Unmaps it and cuts the reserved room off: a stopped daemon leaves its lines only. */
  close(): void {
    try {
      if (this.unmap()) ftruncateSync(this.fd, this.size);
    } finally {
      closeSync(this.fd);
      if (this.walFd !== null) closeSync(this.walFd);
    }
  }

  /** The file with `room` bytes reserved and mapped; null (write(2) from now on) when it cannot be. */
  private mapped(room: number): Buffer | null {
    try {
      this.native!.allocate(this.fd, room);
      return this.native!.map(this.fd, room, true) ?? null;
    } catch {
      return null;
    }
  }

  /** More room for lines ending at `end`: reserved, then mapped; throws (nothing written) when the disk has none. */
  private grow(end: number): void {
    const room = roundUp(end + Math.min(Math.max(this.map!.length, MIB), MAX_STEP));
    this.native!.allocate(this.fd, room);
    const bigger = this.native!.map(this.fd, room, true);
    // the old mapping goes when its buffer is collected: its pages leave now
    this.giveBack(0, this.map!.length);
    this.native!.unmap(this.map!);
    this.map = bigger;
    this.touched = 0; // a new mapping: its pages fault once more
  }

  /** The pages in [from, to) out of the daemon's memory; the lines are written already, so a failure only keeps them resident. */
  private giveBack(from: number, to: number): void {
    try {
      this.native!.release(this.map!, from, to - from);
    } catch {
      /* they stay resident until the journal is emptied */
    }
  }

  private unmap(): boolean {
    if (!this.map) return false;
    this.native!.unmap(this.map);
    this.map = null;
    return true;
  }
}

/** `n` rounded up to a multiple of `unit` (whole MiBs of room, whole pages ahead) */
const roundUp = (n: number, unit = MIB) => Math.ceil(n / unit) * unit;

function mappableFs(path: string): boolean {
  try {
    return MAPPABLE.has(statfsSync(path).type);
  } catch {
    return false;
  }
}

function lastByte(fd: number, size: number): number {
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, size - 1);
  return b[0];
}

/** Where the lines of the open journal `fd` end: its size less the NULs of a mapped journal's reserved room. */
function linesEnd(fd: number): number {
  let end = fstatSync(fd).size;
  const chunk = Buffer.alloc(64 * 1024);
  while (end > 0) {
    const from = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - from, from);
    let i = n - 1;
    while (i >= 0 && chunk[i] === 0) i--;
    if (i >= 0) return from + i + 1;
    end = from;
  }
  return 0;
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
