import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { effectiveTier } from '../../src/daemon/store/users.js';

/**
 * Issue #2 point 6: every row of the contract's `agw admin` table, run as a subprocess
 * with --json against the store of a daemon that is running, checking the exact output
 * keys and the effect (at the API where there is one, else in the store).
 */
let d: TestDaemon;
beforeAll(async () => (d = await startTestDaemon()));
afterAll(() => d.close());

const admin = (...args: string[]): Promise<CliResult> => runCli(['admin', ...args, '--data', d.dataDir]);
async function ok(...args: string[]): Promise<Record<string, unknown>> {
  const r = await admin(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout); // exactly one JSON document on stdout
}
const keysOf = (o: object) => Object.keys(o).sort();
const wallet = async (key: string) => (await d.fetch('/wallet', { key })).json();

describe('agw admin, every row of the contract table, against a running daemon', () => {
  let ada: { id: string; email: string };
  let adaKey: { id: string; key: string };

  it('user create: {id,email,tier,password}; the password logs in; generated when not given', async () => {
    const out = await ok('user', 'create', '--email', 'ada@example.com', '--name', 'Ada', '--tier', 'free', '--password', 'pw-ada-0123');
    expect(keysOf(out)).toEqual(['email', 'id', 'password', 'tier']);
    expect(out).toMatchObject({ email: 'ada@example.com', tier: 'free', password: 'pw-ada-0123', id: expect.stringMatching(/^usr_/) });
    ada = out as { id: string; email: string };
    const gen = await ok('user', 'create', '--email', 'bob@example.com');
    expect(gen).toMatchObject({ tier: 'free', password: expect.stringMatching(/^.{12,}$/) });
    const login = await d.fetch('/portal/login', { method: 'POST', json: { email: 'ada@example.com', password: 'pw-ada-0123' } });
    expect(login.status).toBe(200);
  });

  it('key create: {id,key} and the rest of the key record, an agw_ key that works at the API at once', async () => {
    const out = await ok('key', 'create', ada.email, '--name', 'ci');
    // the contract's {"id","key"}, and (second round) the key record
    expect(keysOf(out)).toEqual(['createdAt', 'expiresAt', 'id', 'key', 'lastUsedAt', 'limits', 'name', 'parentKeyId', 'prefix', 'revoked', 'spent']);
    expect(out).toMatchObject({ name: 'ci', revoked: false, expiresAt: null, limits: { budget: null, rpm: null, tpm: null, models: null } });
    expect(out.key).toMatch(/^agw_/);
    adaKey = out as { id: string; key: string };
    expect((await d.fetch('/wallet', { key: adaKey.key })).status).toBe(200);
  });

  it('user set-tier: {id,tier}; the API sees the new tier’s allowance', async () => {
    expect(await ok('user', 'set-tier', ada.id, 'pro')).toEqual({ id: ada.id, tier: 'pro' });
    expect((await wallet(adaKey.key)).monthlyAllowance).toBe(5);
  });

  it('wallet credit: {balance,currency}; GET /api/wallet shows it, with the note on the transaction', async () => {
    expect(await ok('wallet', 'credit', ada.email, '12.5', '--note', 'welcome')).toEqual({ balance: 12.5, currency: 'USD' });
    expect((await wallet(adaKey.key)).balance).toBe(12.5);
    const txs = await (await d.fetch('/wallet/transactions', { key: adaKey.key })).json();
    expect(txs.items[0]).toMatchObject({ amount: 12.5, balanceAfter: 12.5, description: 'welcome' });
  });

  it('wallet set-unlimited: {unlimited}', async () => {
    expect(await ok('wallet', 'set-unlimited', ada.email, 'true')).toEqual({ unlimited: true });
    expect((await wallet(adaKey.key)).unlimited).toBe(true);
    expect(await ok('wallet', 'set-unlimited', ada.email, 'false')).toEqual({ unlimited: false });
    expect((await wallet(adaKey.key)).unlimited).toBe(false);
  });

  it('org create / add-member / set-active: an active organization’s tier wins', async () => {
    const org = await ok('org', 'create', '--name', 'Acme', '--tier', 'enterprise');
    expect(keysOf(org)).toEqual(['active', 'id', 'name', 'tier']);
    expect(org).toMatchObject({ name: 'Acme', tier: 'enterprise', active: true });
    expect(await ok('org', 'add-member', String(org.id), ada.email)).toEqual({ orgId: org.id, userId: ada.id });
    expect(await effectiveTier(d.daemon.ctx.db, ada.id)).toBe('enterprise');
    expect((await wallet(adaKey.key)).monthlyAllowance).toBe(100);
    expect(await ok('org', 'set-active', String(org.id), 'false')).toEqual({ id: org.id, active: false });
    expect(await effectiveTier(d.daemon.ctx.db, ada.id)).toBe('pro');
    expect((await wallet(adaKey.key)).monthlyAllowance).toBe(5);
  });

  it('quota set: {usageType,limit}; -1 means no cap', async () => {
    expect(await ok('quota', 'set', ada.email, 'ai_chat', '1000')).toEqual({ usageType: 'ai_chat', limit: 1000 });
    expect(await ok('quota', 'set', ada.email, 'tts', '-1')).toEqual({ usageType: 'tts', limit: -1 });
    const rows = await d.daemon.ctx.db.all<{ usage_type: string; quota_limit: number }>(
      'SELECT usage_type, quota_limit FROM quota_overrides WHERE user_id = ? ORDER BY usage_type',
      [ada.id],
    );
    expect(rows.map((r) => [r.usage_type, Number(r.quota_limit)])).toEqual([
      ['ai_chat', 1000],
      ['tts', -1],
    ]);
  });

  it('project create / add-member: {uid,name}, {uid,userId}; both users get a role', async () => {
    const p = await ok('project', 'create', ada.email, '--name', 'Game');
    expect(keysOf(p)).toEqual(['name', 'uid']);
    expect(p.name).toBe('Game');
    expect(await ok('project', 'add-member', String(p.uid), 'bob@example.com')).toMatchObject({ uid: p.uid, userId: expect.stringMatching(/^usr_/) });
    const roles = await d.daemon.ctx.db.all<{ email: string; role: string }>(
      'SELECT u.email AS email, r.role AS role FROM project_roles r JOIN users u ON u.id = r.user_id WHERE r.project_uid = ? ORDER BY u.email',
      [String(p.uid)],
    );
    expect(roles.map((r) => r.email)).toEqual(['ada@example.com', 'bob@example.com']);
  });

  it('oauth-client create: {clientId}; registered with its redirect URI and trust flag', async () => {
    const out = await ok('oauth-client', 'create', '--name', 'App', '--redirect-uri', 'http://127.0.0.1:5000/cb', '--trusted');
    expect(keysOf(out)).toEqual(['clientId']);
    const row = await d.daemon.ctx.db.get<{ redirect_uris: string; trusted: number }>('SELECT redirect_uris, trusted FROM oauth_clients WHERE client_id = ?', [
      out.clientId as string,
    ]);
    expect(JSON.parse(row!.redirect_uris)).toEqual(['http://127.0.0.1:5000/cb']);
    expect(Number(row!.trusted)).toBe(1);
  });

  it('key revoke: {id,revoked:true}; the running daemon refuses the key at once', async () => {
    expect(await ok('key', 'revoke', adaKey.id)).toEqual({ id: adaKey.id, revoked: true });
    const res = await d.fetch('/wallet', { key: adaKey.key });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('UNAUTHORIZED');
  });

  it('without --json: one sentence saying what moved and the balance, no JSON (issue #33)', async () => {
    const r = await admin('wallet', 'credit', ada.email, '1');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`credited $1.00 to ${ada.email}: balance $13.50\n`);
  });
});

describe('agw admin errors', () => {
  const usage: [string, string[]][] = [
    ['missing required option', ['user', 'create']],
    ['unknown tier', ['user', 'create', '--email', 'x@example.com', '--tier', 'platinum']],
    ['not an amount', ['wallet', 'credit', 'ada@example.com', 'ten']],
    ['negative amount', ['wallet', 'credit', 'ada@example.com', '-5']],
    ['not a boolean', ['wallet', 'set-unlimited', 'ada@example.com', 'yes']],
    ['unknown usage type', ['quota', 'set', 'ada@example.com', 'ai_poetry', '5']],
    ['bad redirect URI', ['oauth-client', 'create', '--name', 'x', '--redirect-uri', 'not a url']],
    ['unknown subcommand', ['wallet', 'drain', 'ada@example.com']],
  ];
  it('usage errors exit 2 and change nothing', async () => {
    const count = async () => Number((await d.daemon.ctx.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM wallet_transactions'))!.n);
    const before = await count();
    const results = await Promise.all(usage.map(([, args]) => admin(...args, '--json')));
    results.forEach((r, i) => {
      expect(r.code, `${usage[i][0]}: ${r.stderr}`).toBe(2);
      expect(r.stdout, usage[i][0]).toBe('');
    });
    expect(await count()).toBe(before);
  });

  it('an unknown user exits 1 with the code on stderr (JSON with --json)', async () => {
    const [human, json] = await Promise.all([admin('wallet', 'credit', 'nobody@example.com', '5'), admin('key', 'create', 'usr_nobody', '--json')]);
    expect(human.code).toBe(1);
    expect(human.stderr).toMatch(/^error USER_NOT_FOUND: no user nobody@example\.com/);
    expect(json.code).toBe(1);
    expect(json.stdout).toBe('');
    expect(JSON.parse(json.stderr)).toMatchObject({ code: 'USER_NOT_FOUND' });
  });

  it('an unknown key or organization exits 1 with its code', async () => {
    const [key, org] = await Promise.all([admin('key', 'revoke', 'key_nope'), admin('org', 'set-active', 'org_nope', 'true')]);
    expect(key.code).toBe(1);
    expect(key.stderr).toContain('KEY_NOT_FOUND');
    expect(org.code).toBe(1);
    expect(org.stderr).toContain('ORG_NOT_FOUND');
  });
});
