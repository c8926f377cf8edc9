import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { nanoToUsd, usdToNano } from '../../src/shared/money.js';
import { quotaUsed, usageRecords, usageTransactions, walletRow } from '../helpers/gateway-fixture.js';
import { bundle, publishJson } from '../api/skills-helpers.js';
import { TRUSTED, authParams, exchange, getCode, oauthFixture, pkce, tokenCall } from '../helpers/oauth.js';
import { answer, startCluster, tally, type Answer, type Cluster } from './cluster.js';

/**
 * Three daemons on one PostgreSQL database behave as one service: quotas, wallets,
 * paid installs and slug claims hold across them because the database enforces them.
 */
let c: Cluster;
beforeAll(async () => {
  // behind a load balancer every daemon names the same public URL (the OIDC issuer)
  c = await startCluster(3, { yaml: 'publicUrl: http://agw.example.test\n' });
});
afterAll(() => c?.close());

const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello from a load-balanced client' }] };
const chat = (i: number, key: string) => c.at(i).fetch('/gateway/chat', { method: 'POST', key, json: CHAT }).then(answer);

describe('three daemons, one PostgreSQL', () => {
  test('a quota of 10 holds across daemons: 60 parallel calls spread over three daemons get exactly 10 through', async () => {
    const u = await c.daemons[0].user({ tier: 'pro', balance: 100, quotas: { ai_chat: 10 } });
    const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => chat(i, u.key)));
    expect(tally(answers)).toEqual({ '200': 10, '429 QUOTA_EXCEEDED': 50 });
    const db = c.daemons[1].daemon.ctx.db;
    expect(await quotaUsed(db, u.id)).toBe(10);
    const usage = await usageRecords(db, u.id);
    expect(usage.filter((r) => r.status === 'finalized')).toHaveLength(10);
    expect(usage).toHaveLength(10); // refused calls never reserved anything
    expect(await usageTransactions(db, u.id)).toHaveLength(10);
  });

  test('a wallet funded for about 8 holds: three daemons with 4 callers each spend it down to less than a hold, never below zero, every debit booked once', async () => {
    const { daemons } = c;
    const small = { ...CHAT, max_tokens: 20 };
    const hold = await oneCallHold(small);
    const funds = Math.round(hold * 8.5);
    const u = await daemons[0].user({ tier: 'free', quotas: { ai_chat: -1 }, balance: nanoToUsd(funds) });
    const all: Answer[] = [];
    const caller = async (d: number) => {
      for (let n = 0; n < 60; n++) {
        const a = await c.at(d).fetch('/gateway/chat', { method: 'POST', key: u.key, json: small }).then(answer);
        all.push(a);
        if (a.status !== 200) return;
      }
    };
    await Promise.all(Array.from({ length: 12 }, (_, i) => caller(i % 3)));
    const ok = all.filter((a) => a.status === 200).length;
    expect(tally(all)).toEqual({ '200': ok, '402 INSUFFICIENT_FUNDS': 12 });
    expect(ok).toBeGreaterThanOrEqual(8); // the funds covered at least 8 worst cases
    const db = daemons[2].daemon.ctx.db;
    const w = await walletRow(db, u.id);
    expect(w.balance).toBeGreaterThanOrEqual(0); // holds: never below zero
    expect(w.balance).toBeLessThan(2 * hold); // and spent down: what is left no longer covers the calls
    const debits = await usageTransactions(db, u.id);
    const finalized = (await usageRecords(db, u.id)).filter((r) => r.status === 'finalized');
    expect(debits).toHaveLength(ok);
    expect(finalized).toHaveLength(ok);
    expect(new Set(debits.map((t) => t.usageId))).toEqual(new Set(finalized.map((r) => r.id)));
    expect(debits.reduce((s, t) => s - t.amount, 0)).toBe(funds - w.balance);
    expect(finalized.reduce((s, r) => s + r.customer, 0)).toBe(funds - w.balance);
  });

  test('two daemons installing the same paid skill for one account at once charge it once', async () => {
    const [a, b, d3] = c.daemons;
    const owner = await a.user({ tier: 'pro' });
    const pub = await answer(await publishJson(a, owner.key, { version: '1.0.0', price: 2 }, bundle('paid-thing')));
    expect(pub.status).toBe(200);
    const id = pub.body.id as number;
    const buyer = await b.user({ tier: 'free', balance: 10 });
    const installs = await Promise.all(
      Array.from({ length: 6 }, (_, i) => [b, d3][i % 2].fetch(`/skills/${id}/install`, { method: 'POST', key: buyer.key }).then(answer)),
    );
    expect(installs.map((x) => x.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const first = installs.filter((x) => x.body.alreadyInstalled === false);
    expect(first).toHaveLength(1);
    expect(first[0].body).toMatchObject({ skillId: id, version: '1.0.0', charged: 2 });
    expect(installs.filter((x) => x.body.alreadyInstalled === true).every((x) => x.body.charged === 0)).toBe(true);
    const db = a.daemon.ctx.db;
    expect((await walletRow(db, buyer.id)).balance).toBe(usdToNano(8));
    expect((await walletRow(db, owner.id)).balance).toBe(usdToNano(1.6));
    const purchases = await db.all("SELECT * FROM wallet_transactions WHERE user_id = ? AND type = 'skill_purchase'", [buyer.id]);
    expect(purchases).toHaveLength(1);
    const skill = await answer(await d3.fetch(`/skills/${id}`));
    expect(skill.body.installCount).toBe(1);
  });

  test('a slug claimed at the same instant through two daemons has one owner; the other gets 403 SLUG_TAKEN', async () => {
    const [a, b] = c.daemons;
    const alice = await a.user({ tier: 'pro' });
    const bob = await b.user({ tier: 'pro' });
    for (let round = 0; round < 5; round++) {
      const slug = `contested-${round}`;
      const [ra, rb] = await Promise.all([
        publishJson(a, alice.key, { version: '1.0.0', slug }, bundle('contested')).then(answer),
        publishJson(b, bob.key, { version: '1.0.0', slug }, bundle('contested')).then(answer),
      ]);
      const statuses = [ra.status, rb.status].sort();
      expect(statuses, JSON.stringify([ra, rb])).toEqual([200, 403]);
      const loser = ra.status === 403 ? ra : rb;
      expect(loser.body.code).toBe('SLUG_TAKEN');
      const winner = ra.status === 200 ? alice : bob;
      const skill = await answer(await c.daemons[2].fetch(`/skills/by-slug/${slug}`));
      expect(skill.body.ownerId).toBe(winner.id);
      const rows = await a.daemon.ctx.db.all('SELECT id FROM skills WHERE slug = ?', [slug]);
      expect(rows).toHaveLength(1);
    }
  });

  test('a key revoked through one daemon stops working on every daemon within a notification’s time; a session made on one works on the others', async () => {
    const [a, b, d3] = c.daemons;
    const u = await a.user({ tier: 'pro' });
    for (const d of c.daemons) expect((await d.fetch('/wallet', { key: u.key })).status).toBe(200);
    const login = await b.fetch('/portal/login', { method: 'POST', json: { email: u.email, password: u.password } });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0];
    const me = await answer(await d3.fetch('/portal/me', { headers: { cookie } }));
    expect(me).toMatchObject({ status: 200, body: { userId: u.id } });
    await a.daemon.ctx.db.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', [Date.now(), u.keyId]);
    // every daemon drops its copy when PostgreSQL delivers the NOTIFY (docs/scale-out.md:
    // milliseconds; a loaded machine may take longer): refused within a second, then for good
    for (const d of c.daemons) await expect.poll(async () => (await d.fetch('/wallet', { key: u.key })).status, { timeout: 1000, interval: 5 }).toBe(401);
    for (const d of c.daemons) {
      const r = await answer(await d.fetch('/wallet', { key: u.key }));
      expect(r).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
      expect((await chat(c.daemons.indexOf(d), u.key)).status).toBe(401);
    }
  });

  test('OAuth across daemons: authorize on one, redeem on another, the token works on the third, refresh back on the first, replays fail everywhere', async () => {
    const [a, b, d3] = c.daemons;
    const f = await oauthFixture(a);
    const { verifier, challenge } = pkce();
    const code = await getCode(a, f.cookie, authParams(challenge));
    const tokens = await exchange(b, code, verifier);
    expect(tokens.status).toBe(200);
    const access = String(tokens.body.access_token);
    expect((await d3.fetch('/wallet', { key: access })).status).toBe(200);
    const refreshed = await tokenCall(a, { grant_type: 'refresh_token', refresh_token: String(tokens.body.refresh_token), client_id: TRUSTED.clientId });
    expect(refreshed.status).toBe(200);
    expect((await b.fetch('/wallet', { key: String(refreshed.body.access_token) })).status).toBe(200);
    const reused = await tokenCall(d3, { grant_type: 'refresh_token', refresh_token: String(tokens.body.refresh_token), client_id: TRUSTED.clientId });
    expect(reused.body.error).toBe('invalid_grant');
    const replay = await exchange(d3, code, verifier);
    expect(replay.body.error).toBe('invalid_grant');
  });
});

/** What one CHAT call costs, measured through the gateway (and checked against the catalog price). */
/** The hold a call with `body` takes (read off a probe call's usage record). */
async function oneCallHold(body: Record<string, unknown>): Promise<number> {
  const d = c.daemons[0];
  const probe = await d.user({ tier: 'free', balance: 1, quotas: { ai_chat: -1 } });
  expect((await d.fetch('/gateway/chat', { method: 'POST', key: probe.key, json: body })).status).toBe(200);
  const [r] = await usageRecords(d.daemon.ctx.db, probe.id);
  expect(r.hold).toBeGreaterThan(r.customer);
  return r.hold;
}

