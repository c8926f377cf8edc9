import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { startOpenAiSim } from '../../src/daemon/demo/upstreams.js';
import { BookingJournal } from '../../src/daemon/money/sqlite/journal.js';
import type { Booking } from '../../src/daemon/money/bookings.js';
import type { Ledger } from '../../src/daemon/money/sqlite/ledger.js';
import { spokenPots } from '../../src/daemon/money/sqlite/spoken.js';
import { quotaPeriod } from '../../src/daemon/money/quotas.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { OPENAI_KEY, quotaUsed, startGatewayFixture, usageRecords, usageTransactions } from '../helpers/gateway-fixture.js';

/**
 * The SQLite daemon books gateway calls through a journal (money/sqlite/ledger.ts): one line
 * appended before the answer goes out, applied to the store in batches after. These tests
 * kill the daemon, hand it a journal left by a crash, run a second daemon on the same
 * directory, change the store from `agw admin` processes while it runs, and take the
 * journal away, and check that every call is booked once and nothing stale is believed.
 */
const dirs: string[] = [];
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'agw-ledger-'));
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function admin(args: string[], data: string): Promise<Record<string, unknown>> {
  const r = await runCli(['admin', ...args, '--data', data, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}

const messages = [{ role: 'user', content: 'Hello there' }];

function books(data: string) {
  const db = new Database(join(data, 'agw.db'), { readonly: true });
  try {
    const records = db.prepare("SELECT id, status, customer_cost_nusd AS cost FROM usage_records ORDER BY id").all() as { id: string; status: string; cost: number }[];
    const debits = db.prepare("SELECT usage_id, amount_nusd AS amount FROM wallet_transactions WHERE type = 'usage' ORDER BY usage_id").all() as { usage_id: string; amount: number }[];
    const used = (db.prepare('SELECT SUM(used) AS n FROM quota_counters').get() as { n: number | null }).n ?? 0;
    const balance = (db.prepare('SELECT balance_nusd AS b FROM wallets').get() as { b: number }).b;
    const rollup = (db.prepare('SELECT SUM(calls) AS calls, SUM(customer_nusd) AS cost FROM spend_daily').get() as { calls: number | null; cost: number | null });
    return { records, debits, used, balance, rollup };
  } finally {
    db.close();
  }
}

/** The fixture's ledger and its journal (private fields, reached for these tests). */
function ledgerOf(f: { db: unknown }): { ledger: Ledger; journal: BookingJournal } {
  const ledger = (f.db as { ledger: Ledger }).ledger;
  return { ledger, journal: (ledger as unknown as { journal: BookingJournal }).journal };
}

describe('the SQLite booking ledger', () => {
  it('calls answered before a SIGKILL are all booked at the next start, each once; the burst cut off holds nothing', async () => {
    const sim = await startOpenAiSim({ apiKey: OPENAI_KEY });
    const data = dataDir();
    try {
      const user = await admin(['user', 'create', '--email', 'crash@example.com'], data);
      const { key } = (await admin(['key', 'create', String(user.id)], data)) as { key: string };
      await admin(['wallet', 'credit', String(user.id), '100'], data);
      const env = { AGW_PROVIDER_OPENAI_BASE_URL: sim.url, AGW_PROVIDER_OPENAI_KEY: OPENAI_KEY };
      const s = await spawnServe(['--data', data], env);
      const res = await Promise.all(
        Array.from({ length: 25 }, () =>
          fetch(`${s.url}/api/gateway/chat`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
          }),
        ),
      );
      await Promise.all(res.map((r) => r.arrayBuffer()));
      expect(res.map((r) => r.status)).toEqual(Array(25).fill(200));
      // a burst in flight when the daemon is killed: held, never answered, never booked
      sim.setMode('slow', { delayMs: 3000 });
      const inFlight = Array.from({ length: 10 }, () =>
        fetch(`${s.url}/api/gateway/chat`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o-mini', messages }),
        }).then((r) => r.status, () => 'cut off'),
      );
      await new Promise((r) => setTimeout(r, 400));
      await s.kill('SIGKILL');
      expect(await Promise.all(inFlight)).toEqual(Array(10).fill('cut off'));
      sim.setMode('ok');
      // every answered call was in the journal before its answer left (a killed daemon's
      // mapped journal: its lines, then the room it had reserved, NULs)
      const journal = join(data, 'agw.db-bookings');
      expect(readFileSync(journal, 'utf8').replace(/\0+$/, '').trim().split('\n')).toHaveLength(25);

      // the next start applies what the killed process had not, and holds nothing for the
      // calls that were cut off; a second start finds nothing to do
      for (let i = 0; i < 2; i++) {
        const again = await spawnServe(['--data', data], env);
        const w = await (await fetch(`${again.url}/api/wallet`, { headers: { authorization: `Bearer ${key}` } })).json();
        expect(w).toMatchObject({ held: 0, heldCalls: 0 });
        expect(await again.kill('SIGTERM')).toBe(0);
      }
      const b = books(data);
      expect(b.records).toHaveLength(25);
      expect(b.records.every((r) => r.status === 'finalized' && r.cost > 0)).toBe(true);
      expect(b.debits.map((d) => d.usage_id)).toEqual(b.records.map((r) => r.id));
      const cost = b.records.reduce((n, r) => n + r.cost, 0);
      expect(b.debits.reduce((n, d) => n - d.amount, 0)).toBe(cost);
      expect(b.balance).toBe(100e9 - cost);
      expect(b.used).toBe(25);
      expect(b.rollup).toEqual({ calls: 25, cost });
      expect(statSync(journal).size).toBe(0); // emptied by the clean stop
    } finally {
      await sim.close();
    }
  });

  it('a journal left by a crash is applied at start: torn lines skipped, bookings already in the store not booked twice', async () => {
    const data = dataDir();
    const user = await admin(['user', 'create', '--email', 'torn@example.com', '--tier', 'free'], data);
    await admin(['wallet', 'credit', String(user.id), '1'], data);
    const now = Date.now();
    const booking = (id: string, status: Booking['status'], customerNano: number): Booking => ({
      id,
      userId: String(user.id),
      usageType: 'ai_chat',
      endpoint: 'chat',
      providerId: 'openai',
      model: 'gpt-4o-mini',
      alias: null,
      projectId: null,
      periodKey: quotaPeriod(now).key,
      createdAt: now - 1000,
      status,
      promptTokens: 10,
      completionTokens: 5,
      units: 0,
      rawNano: customerNano / 2,
      customerNano,
      httpStatus: status === 'failed' ? 502 : 200,
      settledAt: now,
      monthlyAllowance: 0,
      description: 'chat openai/gpt-4o-mini',
    });
    const journal = new BookingJournal(join(data, 'agw.db-bookings'));
    journal.append([booking('use_a', 'finalized', 3000)]);
    journal.append([booking('use_b', 'failed', 0)]);
    journal.append([booking('use_a', 'finalized', 3000)]); // the same call twice: booked once
    journal.append([booking('use_c', 'finalized', 5000)]);
    journal.close();
    const path = join(data, 'agw.db-bookings');
    const lines = readFileSync(path, 'utf8').split('\n');
    appendFileSync(path, `${lines[3].slice(0, 9)}${lines[3].slice(9).replace('5000', '9999')}\n`); // checksum no longer matches
    appendFileSync(path, lines[0].slice(0, 40)); // a write torn by a power loss

    const s = await spawnServe(['--data', data]);
    expect(await s.kill('SIGTERM')).toBe(0);
    expect(s.stderr()).toMatch(/"replayed":3/);
    const b = books(data);
    expect(b.records).toEqual([
      { id: 'use_a', status: 'finalized', cost: 3000 },
      { id: 'use_b', status: 'failed', cost: 0 },
      { id: 'use_c', status: 'finalized', cost: 5000 },
    ]);
    expect(b.debits).toEqual([
      { usage_id: 'use_a', amount: -3000 },
      { usage_id: 'use_c', amount: -5000 },
    ]);
    expect(b.balance).toBe(1e9 - 8000);
    expect(b.used).toBe(2);
    expect(statSync(path).size).toBe(0);
  });

  it('a second daemon on the same data directory is refused with STORE_IN_USE', async () => {
    const data = dataDir();
    const s = await spawnServe(['--data', data]);
    try {
      const second = await runCli(['serve', '--port', '0', '--data', data], { timeoutMs: 15_000 });
      expect(second.code).toBe(1);
      expect(second.stderr).toMatch(/another agw daemon is already serving the store/);
      expect(second.stderr).toMatch(/STORE_IN_USE/);
      expect((await fetch(`${s.url}/api/healthz`)).status).toBe(200);
    } finally {
      expect(await s.kill('SIGTERM')).toBe(0);
    }
    // and once it has stopped, the directory is free again
    const next = await spawnServe(['--data', data]);
    expect(await next.kill('SIGTERM')).toBe(0);
  });

  it('changes made by `agw admin` while the daemon runs count at the next request: credit, tier, revoked key', async () => {
    const f = await startGatewayFixture();
    try {
      const u = await f.d.user({ tier: 'free' });
      const chat = () => f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
      const tier = async () => ((await (await f.d.fetch('/gateway/entitlements', { key: u.key })).json()) as { tier: string }).tier;
      expect((await chat()).status).toBe(402); // nothing to spend yet: the daemon now holds the wallet and the key in memory
      expect(await tier()).toBe('free');
      await admin(['wallet', 'credit', u.id, '1'], f.d.dataDir);
      expect((await chat()).status).toBe(200);
      await admin(['user', 'set-tier', u.id, 'pro'], f.d.dataDir);
      expect(await tier()).toBe('pro');
      await admin(['key', 'revoke', u.keyId], f.d.dataDir);
      expect((await chat()).status).toBe(401);
    } finally {
      await f.close();
    }
  });

  it('a store that refuses writes for a while: reads do not hang, and the booking lands once it accepts them again', async () => {
    const f = await startGatewayFixture();
    try {
      const u = await f.d.user({ tier: 'pro', balance: 1 });
      const { ledger } = ledgerOf(f);
      const host = (ledger as unknown as { host: { txThen: (...a: unknown[]) => Promise<unknown> } }).host;
      const txThen = host.txThen;
      host.txThen = () => Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }));
      try {
        const r = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
        expect(r.status).toBe(200); // the booking is in the journal
        const t0 = Date.now();
        const w = await f.d.fetch('/wallet', { key: u.key });
        expect(w.status).toBe(200);
        expect(Date.now() - t0).toBeLessThan(5000);
        expect(ledger.hasPending).toBe(true);
      } finally {
        host.txThen = txThen;
      }
      expect(await usageTransactions(f.db, u.id)).toHaveLength(1); // the next read applies it
      expect(ledger.hasPending).toBe(false);
    } finally {
      await f.close();
    }
  });

  it('calls settled in one turn of the event loop share one journal write, made before any of them is answered; a call alone is written at once', async () => {
    const f = await startGatewayFixture();
    try {
      const u = await f.d.user({ tier: 'pro', balance: 10, quotas: { ai_chat: -1 } });
      const { ledger, journal } = ledgerOf(f);
      const append = journal.append.bind(journal);
      const writes: number[] = [];
      journal.append = (bs) => {
        append(bs);
        writes.push(bs.length);
      };
      try {
        // answered only after its line is written: every 200 seen has its line by then
        const lines = () => readFileSync(journal.path, 'utf8').split('\n').filter(Boolean).length;
        const before = lines();
        const answers = await Promise.all(
          Array.from({ length: 30 }, async () => {
            const r = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
            return { status: r.status, lines: lines() };
          }),
        );
        expect(answers.map((a) => a.status)).toEqual(Array(30).fill(200));
        const seen = answers.map((a) => a.lines - before).sort((a, b) => a - b);
        seen.forEach((n, i) => expect(n).toBeGreaterThanOrEqual(i + 1)); // the i-th answer found at least i lines
        expect(writes.reduce((a, b) => a + b, 0)).toBe(30);
        // three calls in flight settled in one synchronous stretch: nothing written until the
        // turn's check phase, then one write for all three
        writes.length = 0;
        const now = Date.now();
        const b = (id: string): Booking => ({
          id, userId: u.id, keyId: null, budgets: [], usageType: 'ai_chat', endpoint: 'chat', providerId: 'openai', model: 'gpt-4o-mini', alias: null, projectId: null,
          periodKey: quotaPeriod(now).key, createdAt: now, status: 'finalized', promptTokens: 10, completionTokens: 5, cachedTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0,
          units: 0, rawNano: 1000, customerNano: 2000, holdNano: 2000, writtenOffNano: 0, httpStatus: 200, settledAt: now, monthlyAllowance: 0, description: 'chat openai/gpt-4o-mini',
          stream: false, answerStatus: 200, errorCode: null, latencyMs: 1, ttfbMs: null, attempts: 1, droppedParams: null,
        });
        const admit = (id: string) => ledger.admit(id, u.id, 'ai_chat', quotaPeriod(now).key, [], () => []);
        for (const id of ['use_turn_a', 'use_turn_b', 'use_turn_c']) expect(await admit(id)).toBe(true);
        const at = lines();
        const settling = [ledger.settle(b('use_turn_a')), ledger.settle(b('use_turn_b')), ledger.settle(b('use_turn_c'))];
        expect(lines()).toBe(at);
        await Promise.all(settling);
        expect(writes).toEqual([3]);
        expect(lines()).toBe(at + 3);
        // the only call in flight: no other can share the write, so it is made at once, not a turn later
        writes.length = 0;
        expect(await admit('use_alone')).toBe(true);
        const alone = ledger.settle(b('use_alone'));
        expect(writes).toEqual([1]);
        expect(lines()).toBe(at + 4);
        await alone;
      } finally {
        journal.append = append;
      }
      expect(await usageRecords(f.db, u.id)).toHaveLength(34);
      expect(await usageTransactions(f.db, u.id)).toHaveLength(34);
    } finally {
      await f.close();
    }
  });

  it("an admission row read before bookings reached the store is read again after them, at the same store version", async () => {
    const f = await startGatewayFixture();
    try {
      const u = await f.d.user({ tier: 'pro', balance: 10, quotas: { ai_chat: -1 } });
      const { ledger } = ledgerOf(f);
      const version = (f.db as unknown as { version(): number }).version();
      const period = quotaPeriod(Date.now()).key;
      const seen: { funds: number; pending: number }[] = [];
      // what admission sees: the row's funds (balance less allowance used) and what is booked but not in the store yet
      const look = async (id: string) => {
        const ok = await ledger.admit(id, u.id, 'ai_chat', period, [], (row, spoken) => {
          seen.push({ funds: row!.balance_nusd - row!.allowance_used_nusd, pending: spoken.pendingOf(spokenPots.wallet(u.id)) });
          return [];
        }, version);
        expect(ok).toBe(true);
        ledger.release(id);
      };
      await look('use_look_a'); // the row is read and kept, stamped with `version`
      const r = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
      expect(r.status).toBe(200);
      await look('use_look_b'); // booked, not applied: the kept row, the booking pending
      await ledger.drain(); // applied: the daemon's own commit, the store's version unchanged
      expect((f.db as unknown as { version(): number }).version()).toBe(version);
      await look('use_look_c');
      const [a, b, c] = seen;
      expect(b.funds).toBe(a.funds);
      expect(b.pending).toBeGreaterThan(0);
      // read again: the debit is in the row, nothing pending (a kept row would count the call nowhere)
      expect(c.pending).toBe(0);
      expect(a.funds - c.funds).toBe(b.pending);
    } finally {
      await f.close();
    }
  });

  it('a journal that cannot be written books the call in the store before the answer goes out', async () => {
    const f = await startGatewayFixture();
    try {
      const u = await f.d.user({ tier: 'pro', balance: 1 });
      const { ledger, journal } = ledgerOf(f);
      const append = journal.append;
      journal.append = () => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      };
      try {
        const r = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
        expect(r.status).toBe(200);
        expect(ledger.hasPending).toBe(false);
        expect(ledger.stats.directApplies).toBe(1);
      } finally {
        journal.append = append;
      }
      expect(await usageRecords(f.db, u.id)).toMatchObject([{ status: 'finalized' }]);
      expect(await usageTransactions(f.db, u.id)).toHaveLength(1);
      expect(await quotaUsed(f.db, u.id)).toBe(1);
    } finally {
      await f.close();
    }
  });
  it('journal and store both failing: the call is answered with an error, costs nothing, and holds nothing afterwards', async () => {
    const f = await startGatewayFixture();
    try {
      const u = await f.d.user({ tier: 'free', balance: 1, quotas: { ai_chat: -1 } });
      const { ledger, journal } = ledgerOf(f);
      const host = (ledger as unknown as { host: { txThen: (...a: unknown[]) => Promise<unknown> } }).host;
      const append = journal.append;
      const txThen = host.txThen;
      journal.append = () => {
        throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
      };
      host.txThen = () => Promise.reject(Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }));
      try {
        const r = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
        expect(r.status).toBeGreaterThanOrEqual(500);
      } finally {
        journal.append = append;
        host.txThen = txThen;
      }
      const w = await (await f.d.fetch('/wallet', { key: u.key })).json();
      expect(w).toMatchObject({ balance: 1, held: 0, heldCalls: 0 });
      expect(await usageTransactions(f.db, u.id)).toHaveLength(0);
    } finally {
      await f.close();
    }
  });
});
