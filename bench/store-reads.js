// Store-heavy reads: a year of usage for one busy user (written straight into agw.db
// before the daemon starts), then the spend summary over it and entitlements under load.
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Client } from 'undici';
import { runLoad } from './load.js';
import { msSince, percentile } from './stats.js';

const PROVIDERS = ['openai', 'anthropic', 'groq', 'mistral', 'deepseek'];
const DAY_MS = 86_400_000;

/** mulberry32: deterministic rows for a given seed. */
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The busy user (password, key, three projects), created through the built store
 * functions in this process: quicker than seven `agw admin` runs.
 */
export async function seedBusyUser(dataDir, { email, password }) {
  const dist = (m) => import(new URL(`../dist/${m}`, import.meta.url).href);
  const [{ openStore }, users, keys, wallets, projects, overrides, pw] = await Promise.all([
    dist('daemon/store/open.js'),
    dist('daemon/store/users.js'),
    dist('daemon/store/keys.js'),
    dist('daemon/money/wallets.js'),
    dist('daemon/store/projects.js'),
    dist('daemon/store/quota-overrides.js'),
    dist('daemon/auth/password.js'),
  ]);
  const passwordHash = await pw.hashPassword(password);
  const db = await openStore({ store: 'sqlite', dataDir });
  try {
    return await db.tx(async (q) => {
      const u = await users.createUser(q, { email, tier: 'pro', passwordHash });
      const k = await keys.createApiKey(q, u.id, 'bench');
      await wallets.credit(q, { userId: u.id, amount: 1000 * 1e9, type: 'credit', description: 'bench seed' });
      await overrides.setQuotaOverride(q, u.id, 'ai_chat', -1);
      const uids = [];
      for (const name of ['Game', 'Tools', 'Site']) uids.push((await projects.createProject(q, u.id, name)).uid);
      return { id: u.id, email, password, key: k.key, projects: uids };
    });
  } finally {
    await db.close();
  }
}

/**
 * `n` usage rows for `userId` spread over the last 364 days (the mix of
 * test/helpers/seed-usage.ts: ~96% finalized, ~4% failed; five providers; the given
 * projects plus untagged). No 'reserved' rows: the daemon's sweeper would fail old ones
 * at start. One transaction, one prepared insert, then the user's spend_daily rollup
 * rebuilt from them. Returns rows and ms taken.
 */
export function seedUsage(dataDir, userId, n, projects = []) {
  const t0 = process.hrtime.bigint();
  const db = new Database(join(dataDir, 'agw.db'));
  // a bench-only store with no other connection yet: no journal while loading
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -262144');
  db.pragma('temp_store = MEMORY');
  db.pragma('threads = 2');
  // bulk load: drop usage_records' indexes, insert, then rebuild them from their own DDL
  const indexes = db
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'usage_records' AND sql IS NOT NULL")
    .all();
  const insert = db.prepare(
    `INSERT INTO usage_records (id, user_id, usage_type, status, endpoint, provider_id, model, project_id,
       prompt_tokens, completion_tokens, raw_cost_nusd, customer_cost_nusd, http_status, period_start, created_at, finalized_at)
     VALUES (?, ?, 'ai_chat', ?, 'chat', ?, 'gpt-4o-mini', ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const rnd = prng(42);
  const now = Date.now();
  const span = 364 * DAY_MS; // inside range=365d however long the run takes
  const tags = [null, ...projects];
  db.transaction(() => {
    for (const ix of indexes) db.exec(`DROP INDEX ${ix.name}`);
    for (let i = 0; i < n; i++) {
      const ok = rnd() < 0.96;
      const raw = ok ? 1_000 + Math.floor(rnd() * 5_000_000) : 0;
      const createdAt = now - 60_000 - Math.floor((i / n) * span);
      insert.run(
        `use_bench${i.toString(36).padStart(6, '0')}`,
        userId,
        ok ? 'finalized' : 'failed',
        PROVIDERS[Math.floor(rnd() * PROVIDERS.length)],
        tags[Math.floor(rnd() * tags.length)],
        ok ? 40 : 0,
        ok ? 20 : 0,
        raw,
        raw * 2,
        ok ? 200 : 503,
        new Date(createdAt).toISOString().slice(0, 7),
        createdAt,
        createdAt + 500,
      );
    }
    for (const ix of indexes) db.exec(ix.sql);
    // the daily spend rollup the reports read, as settlement keeps it (migration 6's backfill query)
    db.prepare('DELETE FROM spend_daily WHERE user_id = ?').run(userId);
    db.prepare(
      `INSERT INTO spend_daily (user_id, day, provider_id, project_key, calls, failures, raw_nusd, customer_nusd)
         SELECT user_id, created_at / 86400000, provider_id, COALESCE(project_id, ''), COUNT(*),
                SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), SUM(raw_cost_nusd), SUM(customer_cost_nusd)
           FROM usage_records WHERE user_id = ? AND status IN ('finalized', 'failed')
          GROUP BY user_id, created_at / 86400000, provider_id, COALESCE(project_id, '')`,
    ).run(userId);
  })();
  db.pragma('journal_mode = WAL');
  db.close();
  return { rows: n, ms: msSince(t0) };
}

/** Portal login (JSON) → the service_session cookie. */
export async function portalLogin(agwUrl, email, password) {
  const res = await fetch(`${agwUrl}/api/portal/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (res.status !== 200) return { error: `login HTTP ${res.status} ${(await res.text()).slice(0, 160)}` };
  const cookie = /service_session=[^;]+/.exec(res.headers.get('set-cookie') ?? '')?.[0];
  return cookie ? { cookie } : { error: 'login answered without a service_session cookie' };
}

/** GET `path` `calls` times on one connection after `warmup`; percentiles and the last body. */
async function timedGets(origin, path, headers, { calls, warmup }) {
  const client = new Client(origin);
  const times = [];
  let last = null;
  try {
    for (let i = 0; i < warmup + calls; i++) {
      const t0 = process.hrtime.bigint();
      const res = await client.request({ method: 'GET', path, headers });
      const text = await res.body.text();
      const ms = msSince(t0);
      if (res.statusCode !== 200) return { error: `HTTP ${res.statusCode} ${text.slice(0, 160)}` };
      if (i >= warmup) times.push(ms);
      last = text;
    }
  } finally {
    await client.close().catch(() => {});
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99), max: Math.max(...times), calls, body: JSON.parse(last) };
}

/** Spend summary over a year (range=365d) for the busy user; checks it counted every row. */
export async function spendSummary(agwUrl, busy, expectedCalls, { calls = 15, warmup = 2 } = {}) {
  const login = await portalLogin(agwUrl, busy.email, busy.password);
  if (login.error) return { available: false, reason: login.error };
  const r = await timedGets(agwUrl, '/api/portal/spend/summary?range=365d', { cookie: login.cookie }, { calls, warmup });
  if (r.error) return { available: false, reason: r.error };
  const counted = r.body?.totals?.calls;
  return { available: true, rows: expectedCalls, counted, complete: counted === expectedCalls, p50: r.p50, p99: r.p99, max: r.max, calls };
}

/** Entitlements: sequential latency, then autocannon at `connections` (busy user's key). */
export async function entitlements(agwUrl, key, { connections, duration, calls = 200, warmup = 20 }) {
  const sc = { origin: agwUrl, path: '/api/gateway/entitlements', headers: { authorization: `Bearer ${key}` } };
  const seq = await timedGets(agwUrl, sc.path, sc.headers, { calls, warmup });
  if (seq.error) return { available: false, reason: seq.error };
  const load = await runLoad({ ...sc, method: 'GET' }, { connections, duration });
  return { available: true, seqP50: seq.p50, seqP99: seq.p99, ...load };
}
