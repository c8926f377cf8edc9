import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  Checkpointer,
  DEFAULT_AUTOCHECKPOINT,
  SAFETY_NET_PAGES,
  checkpointOn,
  runCheckpointLoop,
} from '../../src/daemon/store/sqlite-checkpointer.js';
import { waitFor } from '../helpers/wait.js';

/**
 * The checkpoint loop on a host thread instead of a worker of its own: what `agw serve`
 * does (the daemon runs in a worker, src/cli/serve-host.ts, and its main thread runs the
 * checkpoints). Here the host is this thread; the loop is the same one the worker runs.
 */
const dir = mkdtempSync(join(tmpdir(), 'agw-checkpointer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => checkpointOn(null));

describe('checkpoints on a host thread', () => {
  it('run on the host, keep the WAL backfilled, and stop with the store', async () => {
    const file = join(dir, 'host.db');
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, part TEXT)');
    const hosted: string[] = [];
    checkpointOn((data, port) => {
      hosted.push(data.file);
      runCheckpointLoop(port, data);
    });
    const thresholds: number[] = [];
    const c = new Checkpointer(file, (pages) => {
      thresholds.push(pages);
      db.pragma(`wal_autocheckpoint = ${pages}`);
    });
    c.start();
    expect(hosted).toEqual([file]);
    await waitFor(() => c.stats.state === 'on');
    expect(db.pragma('wal_autocheckpoint', { simple: true })).toBe(SAFETY_NET_PAGES);

    const insert = db.prepare('INSERT INTO rows (part) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 500; i++) insert.run('x'.repeat(3000));
    })();
    const runs = c.stats.runs;
    await waitFor(() => c.stats.runs > runs + 1);
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    expect(r.log).toBeGreaterThan(0);
    expect(r.checkpointed).toBe(r.log); // the host's connection already copied every frame

    await c.stop();
    expect(c.stats.state).toBe('off');
    expect(thresholds.at(-1)).toBe(DEFAULT_AUTOCHECKPOINT);
    db.close();
  });

  it('a host that cannot open the store leaves the writer its own checkpoints', async () => {
    checkpointOn((data, port) => runCheckpointLoop(port, data));
    const thresholds: number[] = [];
    const c = new Checkpointer(join(dir, 'missing.db'), (pages) => thresholds.push(pages));
    c.start();
    await waitFor(() => c.stats.state === 'failed');
    expect(thresholds).toEqual([DEFAULT_AUTOCHECKPOINT]);
    await c.stop(); // nothing left to stop
    expect(c.stats.state).toBe('failed');
  });
});
