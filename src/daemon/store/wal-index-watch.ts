import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { mappedFiles, type MappedFiles } from './mapped-file.js';

/** Both copies of the WAL-index header (48 bytes each) at the start of the -shm file. */
const HEADER_BYTES = 96;
const COPY_BYTES = 48;
/** iChange, the header's commit counter: a u32 at byte 8 of each copy, in the machine's byte order (SQLite copies its struct) */
const ICHANGE = 8;
const LE = endianness() === 'LE';
const iChangeOf = (b: Buffer) => (LE ? b.readUInt32LE(ICHANGE) : b.readUInt32BE(ICHANGE));

/**
 * Tells whether any connection, in any process, may have committed to a WAL-mode SQLite
 * store since the last look, by reading the WAL-index header at the start of its `-shm`
 * file (https://www.sqlite.org/walformat.html, "The WAL-Index Header"). A commit rewrites
 * both copies of the header with its change counter (iChange) incremented, and is visible
 * to readers only once they are rewritten; a WAL restart rewrites them too. So bytes equal
 * to the last look mean no commit became visible in between; any difference (a commit, a
 * restart, a read torn by a writer at work) counts as a change, which only costs the
 * callers a fresh read.
 *
 * The header is read where SQLite itself reads it: the file is mapped (store/mapped-file.ts),
 * the memory every connection to the store shares, so a look is a 96-byte comparison and no
 * system call. Without the native helper, one pread(2) per look (~1.6 µs in a loop, 7 µs and
 * more on a call's path), where `PRAGMA data_version` opens a read transaction (two fcntl
 * locks, an fstat, a statement). The file stays in place, and keeps its size, while the
 * daemon's own connection is open: SQLite truncates it only when it opens the store as its
 * only connection. `open` returns null when there is no such file (an in-memory store, a
 * store not in WAL mode): use data_version then.
 */
export class WalIndexWatch {
  private readonly last = Buffer.alloc(HEADER_BYTES);
  /** `ownCommit`'s copy of the header */
  private readonly seen = Buffer.alloc(HEADER_BYTES);
  private readonly now: Buffer;
  /** the header's bytes as mapped (`now` is this buffer), or null: read with pread */
  private readonly mapped: MappedFiles | null;

  private constructor(private fd: number | null) {
    const native = fd === null ? null : mappedFiles();
    let view: Buffer | null = null;
    try {
      if (native && fstatSync(fd!).size >= HEADER_BYTES) view = native.map(fd!, HEADER_BYTES, false);
    } catch {
      view = null; // cannot map it: read it
    }
    this.mapped = view ? native : null;
    this.now = view ?? Buffer.alloc(HEADER_BYTES);
    this.changed();
  }

  static open(dbFile: string): WalIndexWatch | null {
    try {
      return new WalIndexWatch(openSync(`${dbFile}-shm`, 'r'));
    } catch {
      return null;
    }
  }

  /** Whether the header is read from memory (true) or with pread(2) (false). */
  get isMapped(): boolean {
    return this.mapped !== null;
  }

  /** True when the header differs from the last look (and on the first look). */
  changed(): boolean {
    // cannot look: assume a change (callers read the store again)
    if (this.fd === null || !this.read()) return true;
    if (this.now.equals(this.last)) return false;
    this.now.copy(this.last);
    return true;
  }

  /**
   * The header's commit counter as it is now (null: it cannot be read). Read while this
   * connection holds the write lock, it is the count before its own commit: no other
   * connection can commit until that lock goes.
   */
  commits(): number | null {
    if (this.fd === null || !this.read()) return null;
    return iChangeOf(this.now);
  }

  /**
   * Right after this connection's own commit, `before` being `commits()` read under its
   * write lock: when the header shows exactly that commit (both copies written, the counter
   * at `before + 1`) and the last look had seen the counter at `before` (no other commit
   * since), the look moves on to it, so it is not reported as a change. Anything else (a
   * commit by another process before or after it, a header being rewritten) is left for
   * `changed` to report.
   */
  ownCommit(before: number): void {
    if (this.fd === null || !this.read()) return;
    // one copy of the header, judged and kept as copied: the mapped header is shared memory,
    // and another process may commit the moment this one's write lock is gone
    const seen = this.seen;
    this.now.copy(seen);
    if (iChangeOf(seen) !== ((before + 1) >>> 0) || iChangeOf(this.last) !== before) return;
    if (seen.compare(seen, 0, COPY_BYTES, COPY_BYTES, HEADER_BYTES) !== 0) return;
    seen.copy(this.last);
  }

  /** `now` holds the header (a mapped one always does; else one pread). */
  private read(): boolean {
    if (this.mapped) return true;
    try {
      return readSync(this.fd!, this.now, 0, HEADER_BYTES, 0) === HEADER_BYTES;
    } catch {
      return false;
    }
  }

  close(): void {
    if (this.fd === null) return;
    if (this.mapped) this.mapped.unmap(this.now);
    closeSync(this.fd);
    this.fd = null;
  }
}
