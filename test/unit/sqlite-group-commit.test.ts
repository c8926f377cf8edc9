import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { waitFor } from '../helpers/wait.js';

/**
 * Issue #9: group commit in the SQLite backend. Concurrent tx() calls share one
 * BEGIN IMMEDIATE … COMMIT, each in its own savepoint; a promise settles only after the
 * COMMIT holding its work; WAL checkpoints run on a worker thread. Not covered because it
 * is not supported: calling the outer Db from inside a tx fn (it waits for the fn's own
 * batch, a deadlock; the Db contract says to use `q`, and sqlite.ts documents it).
 */
const dir = mkdtempSync(join(tmpdir(), 'agw-group-commit-'));
let n = 0;
let db: SqliteDb;
let file: string;

beforeEach(async () => {
  file = join(dir, `g${++n}.db`);
  db = new SqliteDb(file);
  await db.exec('CREATE TABLE counter (id INTEGER PRIMARY KEY, v INTEGER NOT NULL); INSERT INTO counter VALUES (1, 0);');
  await db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, tag TEXT NOT NULL, part TEXT)');
});
afterEach(async () => {
  await db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bump = (tag: string) =>
  db.tx(async (q) => {
    const r = await q.get<{ v: number }>('SELECT v FROM counter WHERE id = 1');
    await q.run('UPDATE counter SET v = ? WHERE id = 1', [r!.v + 1]);
    await q.run('INSERT INTO rows (tag) VALUES (?)', [tag]);
    return r!.v + 1;
  });

describe('SQLite group commit', () => {
  it('concurrent transactions share commits, stay serialised, and each gets its own result', async () => {
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => bump(`t${i}`)));
    // read-modify-write inside each fn: serialised, so the values are 1..60 in call order
    expect(results).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(await db.get('SELECT v FROM counter')).toEqual({ v: 60 });
    expect(db.stats.txs).toBe(60);
    expect(db.stats.commits).toBeLessThan(5);
    expect(db.stats.largestBatch).toBeGreaterThan(10);
  });

  it('a lone call commits at once (its own batch) and later calls get later batches', async () => {
    expect(await bump('a')).toBe(1);
    expect(await bump('b')).toBe(2);
    expect(db.stats).toMatchObject({ commits: 2, txs: 2, largestBatch: 1 });
  });

  it('a lone call runs at once: it does not wait for the next turn of the event loop', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    expect(await bump('alone')).toBe(1);
    expect(turned).toBe(false);
  });

  it('calls from separate callbacks of one loop turn (concurrent requests) are gathered into shared commits', async () => {
    const calls = await new Promise<Promise<number>[]>((resolve) => {
      const out: Promise<number>[] = [];
      for (let i = 0; i < 30; i++) setImmediate(() => out.push(bump(`s${i}`)) === 30 && resolve(out));
    });
    expect((await Promise.all(calls)).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(db.stats.txs).toBe(30);
    expect(db.stats.commits).toBeLessThanOrEqual(3);
    // load gone: a lone call goes back to committing at once
    await bump('later');
    let turned = false;
    setImmediate(() => (turned = true));
    await bump('alone again');
    expect(turned).toBe(false);
  });

  it('a failing member rolls back only its own work and only its promise rejects', async () => {
    const calls = Array.from({ length: 10 }, (_, i) =>
      i === 4
        ? db.tx(async (q) => {
            await q.run('INSERT INTO rows (tag) VALUES (?)', ['doomed']);
            await q.run('UPDATE counter SET v = v + 100 WHERE id = 1');
            throw new Error('member 4 fails');
          })
        : bump(`ok${i}`),
    );
    const settled = await Promise.allSettled(calls);
    expect(settled.map((s) => s.status)).toEqual(settled.map((_, i) => (i === 4 ? 'rejected' : 'fulfilled')));
    expect((settled[4] as PromiseRejectedResult).reason.message).toBe('member 4 fails');
    expect(settled.filter((s) => s.status === 'fulfilled').map((s) => (s as PromiseFulfilledResult<number>).value)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await db.get('SELECT v FROM counter')).toEqual({ v: 9 });
    expect(await db.all('SELECT tag FROM rows WHERE tag = ?', ['doomed'])).toEqual([]);
    expect(db.stats.commits).toBe(1);
  });

  it('a constraint error inside a member (caught or not) leaves the batch intact', async () => {
    await db.exec('CREATE TABLE uniq (k TEXT PRIMARY KEY)');
    const settled = await Promise.allSettled([
      db.tx((q) => q.run('INSERT INTO uniq VALUES (?)', ['x'])),
      db.tx((q) => q.run('INSERT INTO uniq VALUES (?)', ['x'])),
      db.tx((q) => q.run('INSERT INTO uniq VALUES (?)', ['y'])),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/UNIQUE/);
    expect(await db.all('SELECT k FROM uniq ORDER BY k')).toEqual([{ k: 'x' }, { k: 'y' }]);
  });

  it('runs fns in call order and settles their promises in call order', async () => {
    const ran: number[] = [];
    const settledOrder: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        db
          .tx(async (q) => {
            ran.push(i);
            await q.run('INSERT INTO rows (tag) VALUES (?)', [`o${i}`]);
          })
          .then(() => settledOrder.push(i)),
      ),
    );
    const order = Array.from({ length: 20 }, (_, i) => i);
    expect(ran).toEqual(order);
    expect(settledOrder).toEqual(order);
    expect((await db.all<{ tag: string }>('SELECT tag FROM rows ORDER BY id')).map((r) => r.tag)).toEqual(order.map((i) => `o${i}`));
  });

  it('a promise resolves only after the COMMIT: another connection sees the work by then, and not before', async () => {
    const other = new Database(file, { readonly: true });
    try {
      let seenInside: unknown = 'unset';
      const p = db.tx(async (q) => {
        await q.run('INSERT INTO rows (tag) VALUES (?)', ['durable']);
        seenInside = other.prepare('SELECT tag FROM rows WHERE tag = ?').get('durable');
      });
      await p;
      expect(seenInside).toBeUndefined(); // not committed while the fn ran
      expect(other.prepare('SELECT tag FROM rows WHERE tag = ?').get('durable')).toEqual({ tag: 'durable' });
    } finally {
      other.close();
    }
  });

  it('the outer get waits for a running batch: it never sees uncommitted work of a member that then fails', async () => {
    let outerSaw: unknown = 'unset';
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const failing = db.tx(async (q) => {
      await q.run('UPDATE counter SET v = 999 WHERE id = 1');
      // while this member is inside its savepoint, someone else reads through the Db
      void db.get<{ v: number }>('SELECT v FROM counter').then((r) => {
        outerSaw = r?.v;
        release();
      });
      await q.get('SELECT 1');
      throw new Error('rolled back');
    });
    await expect(failing).rejects.toThrow('rolled back');
    await gate;
    expect(outerSaw).toBe(0);
  });

  it('a member that loses the whole transaction fails alone; the others run again and commit once', async () => {
    const runs = new Map<string, number>();
    const counted = (tag: string) =>
      db.tx(async (q) => {
        runs.set(tag, (runs.get(tag) ?? 0) + 1);
        await q.run('INSERT INTO rows (tag) VALUES (?)', [tag]);
      });
    const settled = await Promise.allSettled([
      counted('a'),
      counted('b'),
      db.tx(async (q) => {
        await q.run('ROLLBACK'); // what SQLITE_FULL or an I/O error does to the transaction
        throw new Error('transaction lost');
      }),
      counted('c'),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect(runs).toEqual(new Map([['a', 2], ['b', 2], ['c', 1]]));
    expect((await db.all<{ tag: string }>('SELECT tag FROM rows ORDER BY tag')).map((r) => r.tag)).toEqual(['a', 'b', 'c']);
  });

  it('close() waits for queued transactions to commit', async () => {
    const p = bump('last');
    await db.close();
    expect(await p).toBe(1);
    const check = new Database(file, { readonly: true });
    expect(check.prepare('SELECT v FROM counter').get()).toEqual({ v: 1 });
    check.close();
    db = new SqliteDb(file); // for afterEach
  });

  it('no acknowledged transaction is lost and none is split when the process is killed mid-load', async () => {
    const crashFile = join(dir, 'crash.db');
    const child = crashChild(crashFile);
    const acked = await child.killAfter(400);
    expect(acked.length).toBeGreaterThan(50);
    const check = new Database(crashFile, { readonly: true });
    try {
      const parts = check.prepare('SELECT tag, COUNT(*) AS n FROM rows GROUP BY tag').all() as { tag: string; n: number }[];
      const stored = new Map(parts.map((p) => [p.tag, p.n]));
      for (const tag of acked) expect(stored.get(tag), tag).toBe(2); // acknowledged: both halves stored
      expect(parts.filter((p) => p.n !== 2)).toEqual([]); // never one half of a transaction
    } finally {
      check.close();
    }
  });
});

/**
 * A child process that runs waves of concurrent transactions (each inserts two rows in
 * two statements) on the real SqliteDb and appends each tag to a file (synchronously)
 * once its promise resolved;
 * the test kills it with SIGKILL and then inspects the file.
 */
function crashChild(dbFile: string): { killAfter(ms: number): Promise<string[]> } {
  // the store module and what it imports (the store and money folders, shared helpers, the
  // call-phase marks the ledger publishes) transpiled next to the data in the same layout,
  // better-sqlite3 by absolute path
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const src = fileURLToPath(new URL('../../src/', import.meta.url));
  const files = ['daemon/store', 'daemon/money', 'shared'].flatMap((folder) =>
    (readdirSync(join(src, folder), { recursive: true }) as string[]).filter((n) => n.endsWith('.ts')).map((n) => join(folder, n)),
  );
  for (const file of [...files, 'daemon/telemetry/phases.ts']) {
    const out = join(dir, file.replace(/\.ts$/, '.js'));
    const js = ts.transpileModule(readFileSync(join(src, file), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, js.replaceAll("'better-sqlite3'", JSON.stringify(driver)));
  }
  const mod = join(dir, 'daemon/store/sqlite.js');
  const ackFile = join(dir, 'acks.txt');
  const script = `
    import { openSync, writeSync } from 'node:fs';
    const acks = openSync(${JSON.stringify(ackFile)}, 'a');
    const { SqliteDb } = await import(${JSON.stringify(pathToFileURL(mod).href)});
    const db = new SqliteDb(${JSON.stringify(dbFile)});
    await db.exec('CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, tag TEXT NOT NULL, part TEXT)');
    process.stdout.write('ready\\n');
    for (let wave = 0; ; wave++) {
      await Promise.all(Array.from({ length: 25 }, (_, i) => {
        const tag = 'w' + wave + '_' + i;
        return db.tx(async (q) => {
          await q.run('INSERT INTO rows (tag, part) VALUES (?, ?)', [tag, 'a']);
          await q.run('INSERT INTO rows (tag, part) VALUES (?, ?)', [tag, 'b']);
        }).then(() => writeSync(acks, tag + '\\n'));
      }));
    }`;
  return {
    killAfter: (ms) =>
      new Promise((resolve, reject) => {
        const c = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        let armed = false;
        c.stdout.on('data', (d) => {
          out += d;
          if (armed || !out.startsWith('ready\n')) return;
          armed = true;
          setTimeout(() => c.kill('SIGKILL'), ms).unref();
        });
        c.stderr.on('data', (d) => (err += d));
        c.on('error', reject);
        c.on('close', (_code, signal) => {
          if (signal !== 'SIGKILL') return reject(new Error(`child ended by itself: ${err}`));
          resolve(readFileSync(ackFile, 'utf8').split('\n').slice(0, -1)); // a cut-off last line is not counted
        });
      }),
  };
}

describe('SQLite background checkpoints', () => {
  it('after some commits a worker thread checkpoints the WAL; the writer keeps only a high safety-net threshold', async () => {
    expect(db.checkpointer?.stats.state).toBe('off');
    expect(db.raw.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    for (let i = 0; i < 80; i++) await bump(`c${i}`);
    await waitFor(() => db.checkpointer?.stats.state === 'on');
    expect(db.raw.pragma('wal_autocheckpoint', { simple: true })).toBe(8192);
    // ~1,500 more WAL pages: under the writer's threshold, so only the worker can backfill them
    await Promise.all(Array.from({ length: 300 }, (_, i) => db.tx((q) => q.run('INSERT INTO rows (tag, part) VALUES (?, ?)', [`big${i}`, 'x'.repeat(3000)]))));
    const runs = db.checkpointer!.stats.runs;
    await waitFor(() => db.checkpointer!.stats.runs > runs + 1);
    const [r] = db.raw.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[];
    expect(r.log).toBeGreaterThan(0);
    expect(r.checkpointed).toBe(r.log); // nothing left to copy: the worker did it
    await db.close(); // stops the worker first
    expect(db.checkpointer?.stats.state).toBe('off');
    db = new SqliteDb(file);
    expect(await db.get('SELECT COUNT(*) AS n FROM rows')).toEqual({ n: 380 });
  });

  it(':memory: stores have no checkpointer', async () => {
    const mem = new SqliteDb(':memory:');
    expect(mem.checkpointer).toBeNull();
    await mem.close();
  });
});
