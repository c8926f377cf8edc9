// What the PostgreSQL benchmarks share (pg-chat.js, pg-statements.js, pg-book.js): the
// server (AGW_TEST_PG, default postgres://postgres@127.0.0.1:5432, trust auth), a
// one-off connection to one of its databases, and the CPU its processes used.
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { cpuMsOf } from './procs.js';
import { quotaPeriod } from '../dist/daemon/money/quotas.js';

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

/** A finalized unified-chat call as the gateway books it (a key without limits: no budgets). */
export function benchBooking(u, id, periodKey, now) {
  return {
    id,
    userId: u.id,
    keyId: u.key,
    usageType: 'ai_chat',
    endpoint: 'chat',
    providerId: 'openai',
    model: 'gpt-4o-mini',
    alias: 'fast',
    projectId: null,
    periodKey,
    budgets: [],
    createdAt: now - 2,
    status: 'finalized',
    httpStatus: 200,
    promptTokens: 12,
    completionTokens: 9,
    cachedTokens: 0,
    units: 0,
    rawNano: 7350,
    customerNano: 8820,
    holdNano: 1_500_000,
    writtenOffNano: 0,
    settledAt: now,
    monthlyAllowance: 0,
    description: 'openai gpt-4o-mini: 12 in, 9 out',
    stream: false,
    answerStatus: 200,
    errorCode: null,
    latencyMs: 1.7,
    ttfbMs: 1.2,
    attempts: 1,
  };
}

/**
 * What booking needs in a fresh agw database: a daemon row alive for an hour, and per user
 * an account, a wallet of 1e15 nano-USD and a key, both leased to the daemon in full, and
 * a quota counter with a slice of a billion calls.
 */
export async function seedBooking(c, daemon, users, now) {
  const period = quotaPeriod(now).key;
  await c.query('INSERT INTO daemons (id, started_at, expires_at) VALUES ($1, $2, $3)', [daemon, now, now + 3_600_000]);
  for (const u of users) {
    await c.query("INSERT INTO users (id, email, tier, created_at) VALUES ($1, $2, 'pro', 1)", [u.id, `${u.id}@example.com`]);
    await c.query('INSERT INTO wallets (user_id, balance_nusd, leased_nusd, updated_at) VALUES ($1, $2, $2, 1)', [u.id, 1e15]);
    await c.query("INSERT INTO api_keys (id, user_id, name, lookup, hash, created_at) VALUES ($1, $2, 'k', $1, 'h', 1)", [u.key, u.id]);
    await c.query("INSERT INTO quota_counters (user_id, usage_type, period_start, used, leased) VALUES ($1, 'ai_chat', $2, 0, 1000000000)", [u.id, period]);
    await c.query('INSERT INTO leases (pot, daemon_id, amount) VALUES ($1, $2, $3), ($4, $2, 1000000000)', [`1w:${u.id}`, daemon, 1e15, `2q:${u.id}:ai_chat:${period}`]);
  }
}

/**
 * Other accounts around the benchmark's, so the store's tables have the size of a used one
 * and PostgreSQL plans the booking as it would there (on tables of a few rows it hashes or
 * scans where it would probe an index): per account a wallet, a key, a quota counter, a day's
 * rollups, a slice held by another daemon, and ten calls in the request log. Then ANALYZE.
 */
export async function seedBackground(c, accounts, now) {
  if (!accounts) return;
  const period = quotaPeriod(now).key;
  const day = Math.floor(now / 86_400_000);
  const n = [accounts];
  await c.query('INSERT INTO daemons (id, started_at, expires_at) VALUES ($1, $2, $3)', ['dmn_background', now, now + 3_600_000]);
  await c.query("INSERT INTO users (id, email, tier, created_at) SELECT 'usr_bg_' || g, 'bg' || g || '@example.com', 'pro', 1 FROM generate_series(1, $1) g", n);
  await c.query("INSERT INTO wallets (user_id, balance_nusd, leased_nusd, updated_at) SELECT 'usr_bg_' || g, 1000000000, 1000, 1 FROM generate_series(1, $1) g", n);
  await c.query("INSERT INTO api_keys (id, user_id, name, lookup, hash, created_at) SELECT 'key_bg_' || g, 'usr_bg_' || g, 'k', 'lk_bg_' || g, 'h', 1 FROM generate_series(1, $1) g", n);
  await c.query("INSERT INTO quota_counters (user_id, usage_type, period_start, used) SELECT 'usr_bg_' || g, 'ai_chat', $2, 10 FROM generate_series(1, $1) g", [accounts, period]);
  await c.query("INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls) SELECT 'usr_bg_' || g, $2, 'openai', '', 10 FROM generate_series(1, $1) g", [accounts, day]);
  await c.query("INSERT INTO spend_key_daily (user_id, day, key_id, calls) SELECT 'usr_bg_' || g, $2, 'key_bg_' || g, 10 FROM generate_series(1, $1) g", [accounts, day]);
  await c.query("INSERT INTO leases (pot, daemon_id, amount) SELECT '1w:usr_bg_' || g, 'dmn_background', 1000 FROM generate_series(1, $1) g", n);
  // (a store before migration 13 keeps the debits as rows of wallet_transactions: comparisons with an earlier build)
  const debitColumns = (await c.query("SELECT 1 FROM information_schema.columns WHERE table_name = 'usage_records' AND column_name = 'tx_id'")).rowCount > 0;
  await c.query(
    `INSERT INTO usage_records (id, user_id, usage_type, status, endpoint, provider_id, model, customer_cost_nusd, period_start, created_at, finalized_at
       ${debitColumns ? ', tx_id, tx_amount_nusd, tx_allowance_nusd, tx_balance_after_nusd' : ''})
     SELECT 'use_bg_' || g, 'usr_bg_' || (g % $1 + 1), 'ai_chat', 'finalized', 'chat', 'openai', 'gpt-4o-mini', 100, $2, $3::bigint - g, $3::bigint - g
            ${debitColumns ? ", nextval('wallet_transactions_id_seq'), -100, 0, 1000000000" : ''} FROM generate_series(1, 10 * $1) g`,
    [accounts, period, now],
  );
  if (!debitColumns) {
    await c.query(
      `INSERT INTO wallet_transactions (user_id, type, amount_nusd, balance_after_nusd, usage_id, created_at)
       SELECT 'usr_bg_' || (g % $1 + 1), 'usage', -100, 1000000000, 'use_bg_' || g, $2::bigint - g FROM generate_series(1, 10 * $1) g`,
      [accounts, now],
    );
  }
  await c.query('ANALYZE');
}

