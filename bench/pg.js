// What the PostgreSQL benchmarks share (pg-chat.js, pg-statements.js, pg-book.js): the
// server (AGW_TEST_PG, default postgres://postgres@127.0.0.1:5432, trust auth), a
// one-off connection to one of its databases, and the CPU its processes used.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { cpuMsOf } from './procs.js';

export const PG_SERVER = (process.env.AGW_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, '');

/** Runs `fn` with a client of `database` on PG_SERVER, then closes it. */
export async function onDatabase(database, fn) {
  const c = new pg.Client({ connectionString: `${PG_SERVER}/${database}` });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** CPU ms used so far by every PostgreSQL server process of this machine (backends, WAL writer, checkpointer). */
export function postgresCpuMs() {
  let ms = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    ms += cpuMsOf(pid) ?? 0;
  }
  return ms;
}
