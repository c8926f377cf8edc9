// What booking a batch costs PostgreSQL, in instructions (valgrind's callgrind): they repeat
// run to run, where this machine's timings swing by more than the changes being weighed
// (issue #16). A scratch cluster (initdb, a free port, fsync off) gets agw's schema, a daemon
// and one account (seedBooking); the batches are stored in a table, written by the daemon's
// own encoder (bookingRecords). Then a single-user backend under callgrind books N1 of them
// and, on a fresh copy of the cluster, N2, one statement each: (I2 − I1) / (N2 − N1) is one
// batch's cost, start-up and warm-up cancelled. It counts the whole backend: the function,
// reading the stored batch, the commit. `--sql FILE` runs after the migrations (to weigh a
// change to the function). Needs valgrind and PostgreSQL's server binaries (AGW_PG_BIN,
// default the newest /usr/lib/postgresql/*/bin).
// `npm run build && node bench/pg-callgrind.js [--batch 1,20] [--users N] [--background N] [--sql FILE] [--json] [--keep DIR]`
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { benchBooking, seedBackground, seedBooking } from './pg.js';
import { openAndMigrate } from '../dist/daemon/store/open.js';
import { BOOKING_TYPE, bookingRecords, bookingTypeOid } from '../dist/daemon/money/postgres/booking-row.js';
import { BOOK_FUNCTION } from '../dist/daemon/money/postgres/book.js';
import { quotaPeriod } from '../dist/daemon/money/quotas.js';
import { monthKey, monthStart } from '../dist/daemon/money/wallets.js';

const { values: a } = parseArgs({ options: { batch: { type: 'string' }, sql: { type: 'string' }, json: { type: 'boolean' }, keep: { type: 'string' }, users: { type: 'string' }, background: { type: 'string' } } });
const sizes = (a.batch ?? '1,20').split(',').map(Number);
const runs = (b) => (b < 10 ? [20, 100] : [10, 40]);

const bin = process.env.AGW_PG_BIN ?? newestPgBin();
/** Runs a PostgreSQL program as the postgres user when this is root (the server refuses root). */
function asPostgres(cmd, args, opts = {}) {
  const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  return execFileSync(file, argv, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...opts });
}

// the server's files, the SQL it runs and valgrind's logs: a directory only the postgres user
// (and root) can enter, so nobody else can swap the SQL a superuser backend runs
const tmp = mkdtempSync('/tmp/agw-callgrind-');
if (process.getuid?.() === 0) {
  const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
  const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
  chownSync(tmp, Number(ids), Number(gid));
}
chmodSync(tmp, 0o700);
/** A path as one word of a `sh -c` command. */
const sq = (p) => `'${String(p).replaceAll("'", "'\\''")}'`;
const data = join(tmp, 'data');
const port = await freePort();
const daemon = 'dmn_callgrind';
// --users N: a batch's calls spread over N accounts, one after the other (bench:pg's 20 users)
const users = Array.from({ length: Number(a.users ?? 1) }, (_, i) => ({ id: `usr_callgrind_${i}`, key: `key_callgrind_${i}` }));
try {
  asPostgres(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const start = () => asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-w', '-l', join(tmp, 'server.log'), '-o', `-p ${port} -k ${tmp} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
  start();
  const url = `postgres://postgres@127.0.0.1:${port}`;
  const admin = new pg.Client({ connectionString: `${url}/postgres` });
  await admin.connect();
  await admin.query('CREATE DATABASE agw');
  await admin.end();
  const { db } = await openAndMigrate({ store: `${url}/agw`, dataDir: tmp });
  const oid = await bookingTypeOid(db);
  await db.close();
  const c = new pg.Client({ connectionString: `${url}/agw` });
  await c.connect();
  const now = Date.now();
  await seedBooking(c, daemon, users, now);
  // --background N: N other accounts, so the tables have a used store's size (seedBackground)
  await seedBackground(c, Number(a.background ?? 0), now);
  if (a.sql) await c.query(readFileSync(a.sql, 'utf8'));
  // every batch of every run, with ids of its own (a booking already in the store books nothing)
  // the function the daemon of this build calls, over its booking type
  const book = `${BOOK_FUNCTION}('${daemon}', rows, NULL, false)`;
  await c.query(`CREATE TABLE cg_batches (n int PRIMARY KEY, rows ${BOOKING_TYPE}[])`);
  await c.query('ALTER TABLE cg_batches ALTER COLUMN rows SET STORAGE EXTERNAL'); // no decompression counted
  let n = 0;
  let seq = 0;
  const plan = [];
  for (const b of sizes) {
    for (const count of runs(b)) {
      const first = n + 1;
      for (let i = 0; i < count; i++) {
        const rows = Array.from({ length: b }, (_, ord) => ({
          ...benchBooking(users[ord % users.length], `use_cg${(++seq).toString(36).padStart(8, '0')}`, quotaPeriod(now).key, now),
          ord, month: monthKey(now), monthStart: monthStart(now), leasedWallet: true, leasedQuota: true,
        }));
        await c.query(`INSERT INTO cg_batches (n, rows) VALUES ($1, $2::${BOOKING_TYPE}[])`, [++n, bookingRecords(rows, oid)]);
      }
      plan.push({ batch: b, count, first });
    }
  }
  await c.end();
  asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-w', 'stop']);

  const instructions = {};
  for (const { batch, count, first } of plan) {
    const copy = join(tmp, `run-${first}`);
    asPostgres('cp', ['-a', data, copy]);
    const sql = join(tmp, `run-${first}.sql`);
    let text = 'SET synchronous_commit = off;\n';
    for (let i = first; i < first + count; i++) text += `SELECT ${book} FROM cg_batches WHERE n = ${i};\n`;
    writeFileSync(sql, text, { mode: 0o644 });
    const log = join(tmp, `run-${first}.log`);
    // valgrind reports on stderr; the backend's answers go to stdout
    asPostgres('sh', ['-c', `valgrind --tool=callgrind --callgrind-out-file=${sq(`${copy}.out`)} ${sq(join(bin, 'postgres'))} --single -D ${sq(copy)} agw < ${sq(sql)} > /dev/null 2> ${sq(log)}`]);
    const report = readFileSync(log, 'utf8');
    // a single-user backend exits 0 after a failed statement: a failure would count as a cheap batch
    const failed = /\b(ERROR|FATAL|PANIC):  .*$/m.exec(report);
    if (failed) throw new Error(`a booking failed in the callgrind run: ${failed[0]}`);
    const m = /I\s+refs:\s+([\d,]+)/.exec(report);
    if (!m) throw new Error('callgrind printed no total');
    (instructions[batch] ??= {})[count] = Number(m[1].replaceAll(',', ''));
    // --keep DIR: valgrind's profiles, for callgrind_annotate (batch-<size>-<count>.out)
    if (a.keep) {
      mkdirSync(a.keep, { recursive: true });
      copyFileSync(`${copy}.out`, join(a.keep, `batch-${batch}-${count}.out`));
    }
    rmSync(copy, { recursive: true, force: true });
  }
  const out = sizes.map((b) => {
    const [n1, n2] = runs(b);
    const perBatch = Math.round((instructions[b][n2] - instructions[b][n1]) / (n2 - n1));
    return { batch: b, instructionsPerBatch: perBatch, instructionsPerCall: Math.round(perBatch / b) };
  });
  console.log(a.json ? JSON.stringify(out) : out.map((o) => `batch ${o.batch}: ${o.instructionsPerBatch} instructions per batch, ${o.instructionsPerCall} per call`).join('\n'));
} finally {
  try {
    if (existsSync(join(data, 'postmaster.pid'))) asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-w', '-m', 'immediate', 'stop']);
  } catch {
    // already stopped
  }
  rmSync(tmp, { recursive: true, force: true });
}

function newestPgBin() {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)).sort((x, y) => Number(y) - Number(x)) : [];
  if (!versions.length) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql: set AGW_PG_BIN');
  return join(root, versions[0], 'bin');
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}
