import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteDb } from '../../src/daemon/store/sqlite.js';
import { WalIndexWatch } from '../../src/daemon/store/wal-index-watch.js';
import { MMAP_WAYS, useMmapWay } from '../helpers/mapped-files.js';

/**
 * The daemon's in-memory copies (keys, admission rows) are valid while the store's
 * version holds; the version follows other processes' commits through the WAL-index
 * header. A missed commit would let a revoked key through: these tests commit from
 * another connection and from another process and expect the change to be seen.
 */
const dir = mkdtempSync(join(tmpdir(), 'agw-walwatch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');

function walStore(name: string): { file: string; db: Database.Database } {
  const file = join(dir, name);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
  return { file, db };
}

/** A commit by another process, as `agw admin` makes one. */
function commitFromAnotherProcess(file: string, sql: string): void {
  const script = `const D = require(${JSON.stringify(betterSqlite)}); const db = new D(${JSON.stringify(file)}); db.exec(${JSON.stringify(sql)}); db.close();`;
  execFileSync(process.execPath, ['-e', script]);
}

describe.each(MMAP_WAYS)('WalIndexWatch, $way', ({ env, mapped }) => {
  useMmapWay(env);

  it('sees commits by another connection and by another process, and nothing else', () => {
    const { file, db } = walStore(`a-${env ?? 'mapped'}.db`);
    const watch = WalIndexWatch.open(file)!;
    expect(watch).not.toBeNull();
    // npm install builds the helper (native/README.md): without it this fails on purpose
    expect(watch.isMapped, 'the header is mapped (native/mmap.c built by npm install)').toBe(mapped);
    expect(watch.changed()).toBe(false);

    const other = new Database(file);
    expect(other.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    expect(watch.changed()).toBe(false); // a read is no commit

    other.prepare('INSERT INTO t (v) VALUES (?)').run('x');
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(false);

    commitFromAnotherProcess(file, "INSERT INTO t (v) VALUES ('from a process')");
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(false);

    // a checkpoint that empties the WAL, then a commit that restarts it
    db.pragma('wal_checkpoint(TRUNCATE)');
    watch.changed();
    commitFromAnotherProcess(file, "UPDATE t SET v = 'restarted' WHERE id = 1");
    expect(watch.changed()).toBe(true);

    watch.close();
    expect(watch.changed()).toBe(true); // closed: every look is a change (callers ask the store)
    other.close();
    db.close();
  });

  it("takes this connection's own commit as seen, unless another commit came before or after it", () => {
    const { file, db } = walStore(`own-${env ?? 'mapped'}.db`);
    const watch = WalIndexWatch.open(file)!;
    const other = new Database(file);
    /** a commit of `db` told to the watch as the group commit tells it: the counter read under the write lock */
    const own = (between?: () => void) => {
      db.exec('BEGIN IMMEDIATE');
      db.prepare('INSERT INTO t (v) VALUES (?)').run('own');
      const before = watch.commits()!;
      db.exec('COMMIT');
      between?.();
      watch.ownCommit(before);
    };
    expect(watch.changed()).toBe(false);
    own();
    expect(watch.changed()).toBe(false);
    own();
    own();
    expect(watch.changed()).toBe(false);

    // another connection's commit before the own one (after the last look): seen
    other.prepare('INSERT INTO t (v) VALUES (?)').run('other');
    own();
    expect(watch.changed()).toBe(true);
    expect(watch.changed()).toBe(false);

    // another process's commit right after the own one, before the watch was told: seen
    own(() => commitFromAnotherProcess(file, "INSERT INTO t (v) VALUES ('right after')"));
    expect(watch.changed()).toBe(true);

    // another process's commit landing while the watch reads the header after its own: seen
    expect(watch.changed()).toBe(false);
    const now = (watch as unknown as { now: Buffer }).now;
    const copy = now.copy.bind(now);
    now.copy = ((...args: Parameters<Buffer['copy']>) => {
      commitFromAnotherProcess(file, "INSERT INTO t (v) VALUES ('while it looked')");
      now.copy = copy;
      return copy(...args);
    }) as Buffer['copy'];
    own();
    expect(watch.changed()).toBe(true);

    // told of an own commit that did not happen (the counter as it stands): a later commit is still seen
    watch.ownCommit(watch.commits()!);
    other.prepare('INSERT INTO t (v) VALUES (?)').run('other again');
    expect(watch.changed()).toBe(true);
    watch.close();
    other.close();
    db.close();
  });

  it('is not available without a WAL-index file', () => {
    expect(WalIndexWatch.open(join(dir, 'missing.db'))).toBeNull();
  });
});

describe('SqliteDb.version', () => {
  it('moves on a commit by another process and stays put while nothing commits', async () => {
    const file = join(dir, 'store.db');
    const db = new SqliteDb(file);
    await db.exec('CREATE TABLE k (id INTEGER PRIMARY KEY, revoked INTEGER NOT NULL DEFAULT 0)');
    await db.run('INSERT INTO k (id) VALUES (1)');
    const v0 = db.version();
    await db.get('SELECT revoked FROM k WHERE id = 1');
    expect(db.version()).toBe(v0);
    commitFromAnotherProcess(file, 'UPDATE k SET revoked = 1 WHERE id = 1');
    const v1 = db.version();
    expect(v1).not.toBe(v0);
    expect(db.version()).toBe(v1);
    expect(await db.get('SELECT revoked FROM k WHERE id = 1')).toEqual({ revoked: 1 });
    await db.close();
  });

  it("stays put across the daemon's own booking batches, and moves for its other writes and another process's", async () => {
    const file = join(dir, 'bookings.db');
    const db = new SqliteDb(file);
    await db.exec('CREATE TABLE u (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)');
    await db.run('INSERT INTO u (id, n) VALUES (1, 0)');
    // a store new to WAL mode is watched through its header from the start, as the daemon's is
    expect((db as unknown as { walIndex: WalIndexWatch | null }).walIndex).not.toBeNull();
    const group = (db as unknown as { group: { tx(fn: (q: { run(sql: string): Promise<unknown> }) => Promise<unknown>, after: undefined, booking: boolean): Promise<unknown> } }).group;
    const book = () => group.tx((q) => q.run('UPDATE u SET n = n + 1 WHERE id = 1'), undefined, true);
    const v0 = db.version();
    await book();
    await Promise.all([book(), book(), book()]); // one batch of three
    expect(db.version()).toBe(v0);
    expect(await db.get('SELECT n FROM u WHERE id = 1')).toEqual({ n: 4 });

    await db.run('UPDATE u SET n = 0 WHERE id = 1'); // not a booking: a change
    const v1 = db.version();
    expect(v1).not.toBe(v0);

    commitFromAnotherProcess(file, 'UPDATE u SET n = 100 WHERE id = 1');
    await book(); // after the other process's commit: that one is still seen
    const v2 = db.version();
    expect(v2).not.toBe(v1);
    expect(db.version()).toBe(v2);
    await db.close();
  });
});
