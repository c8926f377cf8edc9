import { afterEach, beforeEach } from 'vitest';

/**
 * The two ways the SQLite daemon reaches its store's files (store/mapped-file.ts): mapped
 * (native/mmap.c, built by `npm install`) and with system calls (`AGW_MMAP=off`), for
 * `describe.each`. `mapped`: what a file opened that way must report.
 */
export const MMAP_WAYS = [
  { way: 'mapped', env: undefined, mapped: true },
  { way: 'with system calls (AGW_MMAP=off)', env: 'off', mapped: false },
] as const;

/** AGW_MMAP set to `env` (unset: undefined) for each test of the calling describe, and put back after it. */
export function useMmapWay(env: string | undefined): void {
  let saved: string | undefined;
  beforeEach(() => {
    saved = process.env.AGW_MMAP;
    if (env === undefined) delete process.env.AGW_MMAP;
    else process.env.AGW_MMAP = env;
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.AGW_MMAP;
    else process.env.AGW_MMAP = saved;
  });
}
