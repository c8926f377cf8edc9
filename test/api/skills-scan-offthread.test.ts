import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishForm } from './skills-helpers.js';

/**
 * Review finding M4: publishing a skill cannot stall the daemon. The scan runs off the event
 * loop (a worker thread), its matching is linear, and a bundle's total size is capped, so a
 * 5 MiB hostile file (255-character base64 runs, each a near miss of ENCODED_BLOB's 256;
 * "wget" gaps) keeps the daemon answering while it is scanned: the event loop is never
 * blocked for more than a fraction of a second, on publish and on the lazy seal of a version
 * published before migration 17 (triggered by the public GET …/scan).
 */
let td: TestDaemon;
let user: TestUser;
beforeAll(async () => {
  td = await startTestDaemon();
  user = await td.user({ balance: 5 });
});
afterAll(async () => {
  await td?.close();
});

const FIVE_MIB = 5 * 1024 * 1024;
const fill = (unit: string) => unit.repeat(Math.ceil(FIVE_MIB / unit.length)).slice(0, FIVE_MIB);
/** 255 base64 characters, a blank, again: every run one short of a finding. */
const NEAR_BLOBS = fill(`${'QUJD'.repeat(64).slice(0, 255)} `);
/** "wget" and a 195-character gap with no "&&" after it, line after line. */
const WGET_GAPS = fill(`wget ${'a'.repeat(195)}\n`);

/** The longest the event loop was blocked while `work` ran (ms), and `work`'s result. */
async function blockedDuring<T>(work: () => Promise<T>): Promise<{ maxMs: number; result: T }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  try {
    const result = await work();
    return { maxMs: h.max / 1e6, result };
  } finally {
    h.disable();
  }
}

describe('the scan runs off the event loop', () => {
  it.each([
    ['255-character base64 runs', NEAR_BLOBS],
    ['wget with long gaps', WGET_GAPS],
  ])('publishing a 5 MiB file of %s never blocks the event loop for long; the daemon answers meanwhile', async (_what, text) => {
    const slug = `hostile-${Math.random().toString(36).slice(2, 8)}`;
    let pings = 0;
    let slowestPing = 0;
    let publishing = true;
    const pinger = (async () => {
      while (publishing) {
        const t = performance.now();
        await td.fetch('/healthz');
        slowestPing = Math.max(slowestPing, performance.now() - t);
        pings++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const { maxMs, result: res } = await blockedDuring(() =>
      publishForm(td, user.key, { version: '1.0.0', category: 'scene' }, bundle(slug, { path: 'data/blob.txt', content: text })),
    );
    publishing = false;
    await pinger;
    expect(res.status, await res.clone().text()).toBe(200);
    expect(maxMs).toBeLessThan(400);
    expect(slowestPing).toBeLessThan(500);
    expect(pings).toBeGreaterThan(1);
  });

  it('the lazy seal of an old version (public GET …/scan) scans off the event loop too, once for concurrent readers', async () => {
    const slug = `old-${Math.random().toString(36).slice(2, 8)}`;
    const pub = await publishForm(td, user.key, { version: '1.0.0', category: 'scene' }, bundle(slug, { path: 'data/blob.txt', content: NEAR_BLOBS }));
    expect(pub.status).toBe(200);
    const { id } = await json<{ id: number }>(pub);
    const first = await json(await td.fetch(`/skills/${id}/versions/1.0.0/scan`));
    // as published before migration 17: no digest, signature or findings yet
    await td.daemon.ctx.db.run('UPDATE skill_versions SET digest = NULL, signature_kid = NULL, signature = NULL, scan = NULL WHERE skill_id = ?', [id]);
    const { maxMs, result } = await blockedDuring(() => Promise.all(Array.from({ length: 4 }, () => td.fetch(`/skills/${id}/versions/1.0.0/scan`))));
    expect(result.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const again = await Promise.all(result.map((r) => json(r)));
    for (const a of again) expect(a).toMatchObject({ digest: (first as { digest: string }).digest, findings: (first as { findings: unknown[] }).findings });
    expect(maxMs).toBeLessThan(400);
  });
});

describe('a bundle over the total the scan takes', () => {
  it('is refused with 413 BUNDLE_TOO_LARGE before anything is scanned or stored', async () => {
    const slug = `big-${Math.random().toString(36).slice(2, 8)}`;
    const files = Array.from({ length: 14 }, (_, i) => ({ path: `data/f${i}.txt`, content: Buffer.alloc(FIVE_MIB, 0x61 + (i % 20)) }));
    const res = await publishForm(td, user.key, { version: '1.0.0', category: 'scene' }, bundle(slug, ...files));
    const body = await json(res);
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(413);
    expect(body.code).toBe('BUNDLE_TOO_LARGE');
    expect((await td.fetch(`/skills/by-slug/${slug}`)).status).toBe(404);
  });
});
