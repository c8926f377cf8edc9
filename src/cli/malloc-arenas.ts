import { nativeAddon } from '../shared/native-addon.js';

/**
 * The C allocator's arenas of `agw serve` (native/malloc.c, built with native/mmap.c). glibc
 * gives each thread that allocates its own arena, up to eight per core, and an arena keeps
 * the pages it grew to: after a burst of calls the daemon thread's arena held 27-28 MB of
 * the process's ~148 MB resident (what that thread asks of the C allocator: Buffers'
 * contents, SQLite's pages and statements), and `malloc_trim` gave back 3.6 MB of it. With
 * the threads that start after this call (the daemon's, its pools') sharing the arenas that
 * exist, the daemon's resident memory after load fell by ~3 MB on average of paired runs,
 * with no difference in latency (docs/performance.md, stop 46).
 */
export const MALLOC_ARENAS = 1;

interface MallocHelper {
  limitArenas(n: number): boolean;
  arenas(): number;
}

let helper: MallocHelper | null | undefined;

/** The native helper, or null where it is not built (npm install builds it on Linux with a C compiler). */
export function mallocHelper(): MallocHelper | null {
  if (helper === undefined) helper = nativeAddon<MallocHelper>('agw_malloc', ['limitArenas', 'arenas']);
  return helper;
}

/**
 * Holds the process to MALLOC_ARENAS arenas from now on (more where more exist already),
 * unless the operator chose a number (MALLOC_ARENA_MAX, or glibc.malloc.arena_max in
 * GLIBC_TUNABLES): 'limited', 'operator' (theirs stands), 'unavailable' (no helper, or a C
 * library without the setting).
 */
export function limitMallocArenas(env: NodeJS.ProcessEnv = process.env): 'limited' | 'operator' | 'unavailable' {
  if (env.MALLOC_ARENA_MAX !== undefined || /(^|:)glibc\.malloc\.arena_max=/.test(env.GLIBC_TUNABLES ?? '')) return 'operator';
  return mallocHelper()?.limitArenas(MALLOC_ARENAS) ? 'limited' : 'unavailable';
}
