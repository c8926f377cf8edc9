import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin } from '../helpers/portal.js';
import { ANSI, cliEnv, json, type CliEnv } from './cli-env.js';

/** `agw keys list|create|update|revoke` and `agw spend --by key` against a real daemon. */
let d: TestDaemon;
let ada: TestUser;
let env: CliEnv;

beforeAll(async () => {
  d = await startTestDaemon();
  ada = await d.user({ tier: 'pro', balance: 10 });
  env = cliEnv({ AGW_BASE_URL: d.url });
  const login = await env.run(['login', '--with-token'], { input: ada.key });
  if (login.code !== 0) throw new Error(login.stderr);
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

const api = async (path: string, key = ada.key) => (await d.fetch(path, { key })).json();

describe('agw keys', () => {
  let ci: { id: string; key: string };

  test('create with limits --json: the key record and the secret; list --json equals the API', async () => {
    const r = await env.run(['keys', 'create', '--name', 'ci', '--budget', '5', '--budget-period', 'day', '--rpm', '60', '--models', 'smart-lite,gpt-4o-mini', '--expires', '30d', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const k = json<{ id: string; key: string; limits: unknown; expiresAt: string }>(r);
    expect(k.limits).toEqual({ budget: 5, budgetPeriod: 'day', rpm: 60, tpm: null, models: ['smart-lite', 'gpt-4o-mini'] });
    expect(k.key).toMatch(/^agw_/);
    expect(Math.abs(Date.parse(k.expiresAt) - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
    ci = k;
    const list = await env.run(['keys', 'list', '--json']);
    expect(list.code).toBe(0);
    expect(json(list)).toEqual(await api('/keys'));
    expect(list.stdout).not.toContain(k.key);
  });

  test('update answers the record; none lifts a limit', async () => {
    const r = await env.run(['keys', 'update', ci.id, '--rpm', 'none', '--tpm', '5000', '--name', 'ci-main', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ id: ci.id, name: 'ci-main', limits: { rpm: null, tpm: 5000, budget: 5 } });
  });

  test('without a terminal the list is tab-separated lines with a header, no colour', async () => {
    const r = await env.run(['keys', 'list']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(ANSI);
    const [head, ...rows] = r.stdout.trim().split('\n');
    expect(head.split('\t').slice(0, 5)).toEqual(['ID', 'NAME', 'PREFIX', 'STATUS', 'BUDGET']);
    expect(rows.find((l) => l.startsWith(ci.id))!.split('\t')).toEqual(expect.arrayContaining(['ci-main', 'active', '$5.00/day']));
  });

  test('bad flags are usage errors (exit 2) and send nothing', async () => {
    const before = ((await api('/keys')) as { items: unknown[] }).items.length;
    for (const args of [
      ['--budget', 'five'],
      ['--budget-period', 'year'],
      ['--rpm', '0'],
      ['--tpm', '1.5'],
      ['--expires', 'yesterday'],
      ['--expires', '2001-01-01'],
      ['--models', ','],
      ['--rpm', '2000000'],
      ['--budget', '2000000'],
      ['--models', 'a b'],
      ['--budget-period', 'day'], // without a budget: refused by the server, still a usage error
    ]) {
      const r = await env.run(['keys', 'create', '--name', 'bad', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toContain(args[0]);
    }
    expect((await env.run(['keys', 'create'])).code).toBe(2);
    expect((await env.run(['keys', 'update', ci.id])).code).toBe(2);
    expect(((await api('/keys')) as { items: unknown[] }).items.length).toBe(before);
  });

  test('logged in with a limited key: it cannot make a wider key (exit 1, the code and a hint)', async () => {
    const limited = cliEnv({ AGW_BASE_URL: d.url, AGW_API_KEY: ci.key });
    try {
      const r = await limited.run(['keys', 'create', '--name', 'wider', '--budget', '50']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('KEY_LIMITS_TOO_WIDE');
      expect(r.stderr).toContain('hint:');
      const ok = await limited.run(['keys', 'create', '--name', 'job', '--budget', '1', '--json']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(json(ok)).toMatchObject({ parentKeyId: ci.id, limits: { budget: 1, budgetPeriod: 'day', tpm: 5000 } });
      const mine = json<{ items: { id: string }[] }>(await limited.run(['keys', 'list', '--json']));
      expect(mine.items.map((k) => k.id)).not.toContain(ada.keyId);
    } finally {
      limited.cleanup();
    }
  });

  test('revoke --json answers the revoked record; the key stops working', async () => {
    const r = await env.run(['keys', 'revoke', ci.id, '--json']);
    expect(r.code).toBe(0);
    expect(json(r)).toMatchObject({ id: ci.id, revoked: true });
    expect((await d.fetch('/gateway/entitlements', { key: ci.key })).status).toBe(401);
    const missing = await env.run(['keys', 'revoke', 'key_nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('KEY_NOT_FOUND');
  });
});

describe('agw spend --by key', () => {
  test('--json is the API answer with byKey; the table lists keys by name', async () => {
    await d.daemon.ctx.db.run(
      `INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd) VALUES (?, ?, ?, 3, 0, 500000000, 1000000000)`,
      [ada.id, Math.floor(Date.now() / 86_400_000), ada.keyId],
    );
    expect((await env.run(['login', '--email', ada.email], { input: ada.password })).code).toBe(0);
    const s = await portalLogin(d, ada);
    const r = await env.run(['spend', '--by', 'key', '--range', '7d', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const api7 = await (await d.fetch('/portal/spend/summary?range=7d', { headers: { cookie: s.cookie } })).json();
    const noSince = (x: { range: object }) => ({ ...x, range: { ...x.range, since: '' } });
    expect(noSince(json(r))).toEqual(noSince(api7));
    const human = await env.run(['spend', '--by', 'key']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`test (${ada.keyId})\t3\t0\t$1.00`);
    expect(human.stdout).not.toContain('PROVIDER');
    expect((await env.run(['spend', '--by', 'model'])).code).toBe(2);
  });
});
