import { nativeAddon } from '../../shared/native-addon.js';

/**
 * The native helper of native/mmap.c: a file's pages mapped into the daemon's memory, so the
 * two reads and writes a gateway call would otherwise make with a system call each (the
 * store's WAL-index header, store/wal-index-watch.ts; the booking journal's line,
 * money/sqlite/journal.ts) are a memory read and a memory copy. What a process writes to
 * a shared mapping is the file's page cache at once: it survives the process being killed,
 * as a write(2) does, and another process's writes are seen as they land.
 */
export interface MappedFiles {
  /** the first `length` bytes of the open file `fd`, shared with the file */
  map(fd: number, length: number, writable: boolean): Buffer;
  /** detaches a buffer of `map` (length 0); its pages are unmapped when its memory is released */
  unmap(buffer: Buffer): void;
  /** the file's blocks reserved up to `length` (posix_fallocate): a write through a mapping never lacks disk space */
  allocate(fd: number, length: number): void;
  /** the buffer's pages in [offset, offset + length) dropped from this process's memory (madvise MADV_DONTNEED); written data stays in the file */
  release(buffer: Buffer, offset: number, length: number): void;
}

let loaded: MappedFiles | null | undefined;

/**
 * The helper, or null where it is not built (`npm install` builds it with node-gyp, on
 * Linux with a C compiler) or `AGW_MMAP=off` is set (a comparison, a
 * diagnosis): callers then use pread(2) and write(2), as before it existed. Read when a
 * file is opened, never per call.
 */
export function mappedFiles(): MappedFiles | null {
  if (process.env.AGW_MMAP === 'off') return null;
  if (loaded === undefined) loaded = nativeAddon<MappedFiles>('agw_mmap', ['map', 'unmap', 'allocate', 'release']);
  return loaded;
}
