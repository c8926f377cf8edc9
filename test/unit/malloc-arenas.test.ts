import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { limitMallocArenas, mallocHelper } from '../../src/cli/malloc-arenas.js';

const ADDON = fileURLToPath(new URL('../../native/build/Release/agw_malloc.node', import.meta.url));
/** what `agw serve` calls (the build npm test makes first) */
const LIMITER = fileURLToPath(new URL('../../dist/cli/malloc-arenas.js', import.meta.url));

/**
 * A fresh process (this one's threads have their arenas already): with `limit`, the arenas
 * held as `agw serve` holds them first (limitMallocArenas, no operator setting); then four
 * threads each allocate 200 buffers of 64 KiB, as the daemon's thread and pools do. The
 * arenas the C allocator had before and after.
 */
function arenasAround(limit: boolean): { before: number; after: number; limited: string | null } {
  const script = `
    const m = require(${JSON.stringify(ADDON)});
    (async () => {
      const limited = ${limit} ? (await import(${JSON.stringify(LIMITER)})).limitMallocArenas({}) : null;
      const before = m.arenas();
      const { Worker } = require('node:worker_threads');
      const work = 'const k = []; for (let i = 0; i < 200; i++) k.push(Buffer.alloc(65536, i)); require("node:worker_threads").parentPort.postMessage(k.length);';
      await Promise.all([0, 1, 2, 3].map(() => new Promise((done) => {
        const w = new Worker(work, { eval: true });
        w.once('message', () => w.terminate().then(done));
      })));
      console.log(JSON.stringify({ before, after: m.arenas(), limited }));
    })();
  `;
  const env = { ...process.env };
  delete env.MALLOC_ARENA_MAX;
  delete env.GLIBC_TUNABLES;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8', timeout: 30_000 })) as { before: number; after: number; limited: string | null };
}

describe('the C allocator arenas of agw serve (native/malloc.c)', () => {
  it('is built, and counts the arenas', () => {
    expect(mallocHelper(), 'native/malloc.c built by npm install').not.toBeNull();
    expect(mallocHelper()!.arenas(), 'malloc_info counts the arenas (glibc only: -1 elsewhere)').toBeGreaterThanOrEqual(1);
  });

  it('threads started after the limit make no arena of their own; without it they do', () => {
    const free = arenasAround(false);
    expect(free.after, 'four allocating threads without a limit').toBeGreaterThan(free.before);
    const held = arenasAround(true);
    expect(held.limited).toBe('limited');
    expect(held.after, 'the same threads after limitArenas(1)').toBe(held.before);
  });

  it("leaves an operator's own setting alone", () => {
    expect(limitMallocArenas({ MALLOC_ARENA_MAX: '4' })).toBe('operator');
    expect(limitMallocArenas({ GLIBC_TUNABLES: 'glibc.malloc.tcache_count=0:glibc.malloc.arena_max=2' })).toBe('operator');
  });

  it('refuses a number of arenas below one', () => {
    expect(() => mallocHelper()!.limitArenas(0)).toThrow(/at least 1/);
  });
});
