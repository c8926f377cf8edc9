import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nanoToUsd } from '../../src/shared/money.js';
import { spawnServe } from '../helpers/cli.js';
import { OPENAI_KEY, quotaUsed, usageRecords, usageTransactions, walletRow } from '../helpers/gateway-fixture.js';
import { moneyOf } from '../../src/daemon/money/index.js';
import type { PgMoney } from '../../src/daemon/money/postgres/engine.js';
import { answer, startCluster, tally, type Cluster } from './cluster.js';

/**
 * The lease engine on real PostgreSQL (issue #16): daemons admit against slices of each
 * pot they leased from the store. What must hold: the last funds and units are reachable
 * from any daemon (no stranding: peers return unused slices when asked), a killed
 * daemon's slices come back within the lease TTL, batches from several daemons never
 * deadlock, rates and quotas are exact across daemons, and what one daemon changes
 * (a revoked key) the others see at once.
 */
const TTL = 1500;
let c: Cluster;
beforeAll(async () => {
  c = await startCluster(2, { yaml: `gateway: { leaseTtlMs: ${TTL} }\n` });
});
afterAll(() => c?.close());

const messages = [{ role: 'user', content: 'Hello from a load-balanced client' }];
const SMALL = { model: 'gpt-4o-mini', messages, max_tokens: 50 };
const chat = (i: number, key: string, json: Record<string, unknown> = SMALL) => c.at(i).fetch('/gateway/chat', { method: 'POST', key, json }).then(answer);

/** The hold a call with `body` takes, read off a probe call's record. */
async function holdOf(body: Record<string, unknown>): Promise<number> {
  const probe = await c.daemons[0].user({ tier: 'free', balance: 1, quotas: { ai_chat: -1 } });
  expect((await chat(0, probe.key, body)).status).toBe(200);
  const [r] = await usageRecords(c.daemons[0].daemon.ctx.db, probe.id);
  return r.hold;
}

describe('no stranding: the last units and funds are reachable from any daemon', () => {
  test('a quota of 10: 5 calls on one daemon, then 5 on the other all pass; the 11th is refused on both', async () => {
    const u = await c.daemons[0].user({ tier: 'pro', balance: 10, quotas: { ai_chat: 10 } });
    for (let i = 0; i < 5; i++) expect((await chat(0, u.key)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await chat(1, u.key)).status).toBe(200);
    expect((await chat(0, u.key)).body.code).toBe('QUOTA_EXCEEDED');
    expect((await chat(1, u.key)).body.code).toBe('QUOTA_EXCEEDED');
    expect(await quotaUsed(c.daemons[0].daemon.ctx.db, u.id)).toBe(10);
  });

  test('a wallet the first daemon holds a slice of: the second daemon gets it back by asking', async () => {
    const hold = await holdOf(SMALL);
    const u = await c.daemons[0].user({ tier: 'free', quotas: { ai_chat: -1 }, balance: nanoToUsd(Math.floor(hold * 1.8)) });
    expect((await chat(0, u.key)).status).toBe(200); // daemon 0 leased (about) one hold and used a little of it
    const second = await chat(1, u.key); // less than a hold is free in the store: daemon 1 recalls daemon 0's slice
    expect(second.status, JSON.stringify(second.body)).toBe(200);
    const w = await walletRow(c.daemons[0].daemon.ctx.db, u.id);
    expect(w.balance).toBeGreaterThanOrEqual(0);
  });
});

describe('rates and quotas across daemons', () => {
  test('rpm 10 with 30 parallel calls split over two daemons: exactly 10 pass', async () => {
    const u = await c.daemons[0].user({ tier: 'pro', balance: 10, quotas: { ai_chat: -1 } });
    const res = await c.daemons[0].fetch('/keys', { method: 'POST', key: u.key, json: { name: 'rpm', limits: { rpm: 10 } } });
    const k = (await res.json()).key as string;
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(i, k)));
    expect(tally(answers)).toEqual({ '200': 10, '429 RATE_LIMITED': 20 });
  });

  test('a key revoked through one daemon is refused by the other within the time a notification takes', async () => {
    const u = await c.daemons[0].user({ tier: 'pro', balance: 10, quotas: { ai_chat: -1 } });
    expect((await chat(1, u.key)).status).toBe(200); // daemon 1 keeps the key in memory now
    expect((await c.daemons[0].fetch(`/keys/${u.keyId}`, { method: 'DELETE', key: u.key })).status).toBe(200);
    const started = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - started < 2000) {
      status = (await chat(1, u.key)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 5));
    }
    expect(status).toBe(401);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('batches from several daemons never deadlock', () => {
  test('four users, callers on both daemons booking for all of them at once: no deadlock, every call booked once', async () => {
    const { daemons } = c;
    const users = await Promise.all(Array.from({ length: 4 }, () => daemons[0].user({ tier: 'pro', balance: 5, quotas: { ai_chat: -1 } })));
    const admin = new pg.Client({ connectionString: c.db.url });
    await admin.connect();
    const deadlocks = async () => Number((await admin.query('SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()')).rows[0].deadlocks);
    try {
      const before = await deadlocks();
      const calls = [];
      for (let round = 0; round < 10; round++) {
        for (let i = 0; i < 8; i++) calls.push(chat(i + round, users[(i + round) % 4].key));
      }
      const answers = await Promise.all(calls);
      expect(tally(answers)).toEqual({ '200': 80 });
      expect(await deadlocks()).toBe(before);
      for (const u of users) {
        const recs = (await usageRecords(daemons[1].daemon.ctx.db, u.id)).filter((r) => r.status === 'finalized');
        const debits = await usageTransactions(daemons[1].daemon.ctx.db, u.id);
        expect(new Set(debits.map((d) => d.usageId))).toEqual(new Set(recs.map((r) => r.id)));
        expect(debits).toHaveLength(recs.length);
      }
    } finally {
      await admin.end();
    }
  });
});

describe('a daemon taken for dead while it serves calls', () => {
  test('its calls in flight are answered and booked once, from no slice; it goes on under a new identity', async () => {
    const u = await c.daemons[0].user({ tier: 'pro', balance: 5, quotas: { ai_chat: -1 } });
    const engine = (await moneyOf(c.daemons[1].daemon.ctx)) as PgMoney;
    const epoch = engine.slices.epoch;
    c.openai.setMode('slow', { delayMs: 700 });
    const admin = new pg.Client({ connectionString: c.db.url });
    await admin.connect();
    try {
      const inFlight = Promise.all([chat(1, u.key), chat(1, u.key)]);
      await new Promise((r) => setTimeout(r, 250));
      // what the heartbeat of a peer does to a daemon that stopped answering
      // (in one transaction: its own heartbeat cannot extend its lease in between)
      await admin.query('BEGIN');
      await admin.query('UPDATE daemons SET expires_at = 0 WHERE id = $1', [epoch]);
      expect(Number((await admin.query('SELECT agw_reclaim_v7() AS n')).rows[0].n)).toBeGreaterThanOrEqual(1);
      await admin.query('COMMIT');
      expect((await admin.query('SELECT count(*)::int AS n FROM daemons WHERE id = $1', [epoch])).rows[0].n).toBe(0);
      expect((await admin.query('SELECT count(*)::int AS n FROM leases WHERE daemon_id = $1', [epoch])).rows[0].n).toBe(0);
      const answers = await inFlight;
      expect(tally(answers)).toEqual({ '200': 2 });
    } finally {
      c.openai.setMode('ok');
      await admin.end();
    }
    expect(engine.slices.epoch).not.toBe(epoch);
    expect((await chat(1, u.key)).status).toBe(200); // leasing again under the new identity
    const db = c.daemons[0].daemon.ctx.db;
    const recs = (await usageRecords(db, u.id)).filter((r) => r.status === 'finalized');
    expect(recs).toHaveLength(3);
    const debits = await usageTransactions(db, u.id);
    expect(debits.map((d) => d.usageId).sort()).toEqual(recs.map((r) => r.id).sort());
    // each call charged once, what it cost (the pro tier's allowance pays first)
    expect(debits.reduce((a, d) => a - d.amount, 0)).toBe(recs.reduce((a, r) => a + r.customer, 0));
    expect((await walletRow(db, u.id)).allowanceUsed).toBe(recs.reduce((a, r) => a + r.customer, 0));
  });
});

describe('memory', () => {
  test('a daemon forgets the pots of accounts idle for ten idle periods once their slices went back', async () => {
    const u = await c.daemons[0].user({ tier: 'pro', balance: 5, quotas: { ai_chat: 100 } });
    expect((await chat(1, u.key)).status).toBe(200);
    const engine = (await moneyOf(c.daemons[1].daemon.ctx)) as PgMoney;
    const mine = () => [...engine.slices.pots.keys()].filter((name) => name.includes(u.id));
    expect(mine().length).toBe(2); // wallet and quota
    const forgetMs = engine.slices.timing.forgetMs;
    const started = Date.now();
    while (mine().length && Date.now() - started < forgetMs + 3000) await new Promise((r) => setTimeout(r, 100));
    expect(mine()).toEqual([]);
    expect(Date.now() - started).toBeGreaterThan(forgetMs - 500);
    // and the account is served as before, its slices leased afresh
    expect((await chat(1, u.key)).status).toBe(200);
    expect(await quotaUsed(c.daemons[0].daemon.ctx.db, u.id)).toBe(2);
  });
});

describe('a killed daemon', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agw-lease-kill-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test(`its slices come back within the lease TTL (${TTL} ms) plus a heartbeat`, async () => {
    const hold = await holdOf(SMALL);
    const u = await c.daemons[0].user({ tier: 'free', quotas: { ai_chat: -1 }, balance: nanoToUsd(Math.floor(hold * 1.8)) });
    writeFileSync(join(dir, 'agw.yaml'), `store: "${c.db.url}?pool_max=3"\ngateway: { leaseTtlMs: ${TTL} }\n`);
    const victim = await spawnServe(['--data', dir], { AGW_PROVIDER_OPENAI_BASE_URL: c.openai.url, AGW_PROVIDER_OPENAI_KEY: OPENAI_KEY });
    try {
      const r = await fetch(`${victim.url}/api/gateway/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(SMALL),
      });
      expect(r.status).toBe(200);
    } finally {
      await victim.kill('SIGKILL'); // with about one hold leased, unused
    }
    const killedAt = Date.now();
    // while its lease lives, the slice is out of reach (and nobody answers the recall)
    expect((await chat(0, u.key)).body.code).toBe('INSUFFICIENT_FUNDS');
    let ok = false;
    while (!ok && Date.now() - killedAt < TTL * 4) {
      await new Promise((res) => setTimeout(res, 100));
      ok = (await chat(0, u.key)).status === 200;
    }
    expect(ok).toBe(true);
    const heartbeat = TTL / 5;
    expect(Date.now() - killedAt).toBeLessThan(TTL + heartbeat + 1000);
    expect((await walletRow(c.daemons[0].daemon.ctx.db, u.id)).balance).toBeGreaterThanOrEqual(0);
    const leases = await c.daemons[0].daemon.ctx.db.all("SELECT * FROM leases WHERE pot = ? AND amount > 0", [`1w:${u.id}`]);
    expect(leases.length).toBeLessThanOrEqual(1); // only the living daemon's
  });
});
