import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushKeyUses } from '../../src/daemon/auth/key-usage.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';

/**
 * CONTRACT "Keys with limits": `agw admin key create|update|list` with the limit flags,
 * against the store of a running daemon, which sees every change at the key's next call.
 */
let d: TestDaemon;
let ada: TestUser;
beforeAll(async () => {
  d = await startTestDaemon();
  ada = await d.user({ tier: 'pro', balance: 5 });
});
afterAll(() => d.close());

const admin = (...args: string[]): Promise<CliResult> => runCli(['admin', ...args, '--data', d.dataDir]);
async function ok(...args: string[]): Promise<Record<string, any>> {
  const r = await admin(...args, '--json');
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout);
}
const entitlements = async (key: string) => (await d.fetch('/gateway/entitlements', { key })).json();

describe('agw admin key with limits', () => {
  let ci: Record<string, any>;

  it('create with every flag answers the key record and the secret; the key carries its limits at once', async () => {
    ci = await ok('key', 'create', ada.email, '--name', 'ci', '--budget', '5', '--budget-period', 'day', '--rpm', '60', '--tpm', '20000', '--models', 'smart-lite', '--expires', '2099-01-31');
    expect(ci).toMatchObject({
      name: 'ci',
      prefix: expect.stringMatching(/^agw_[0-9a-f]{12}_…$/),
      revoked: false,
      expiresAt: '2099-01-31T00:00:00.000Z',
      limits: { budget: 5, budgetPeriod: 'day', rpm: 60, tpm: 20000, models: ['smart-lite'] },
      spent: 0,
      key: expect.stringMatching(/^agw_/),
    });
    expect((await entitlements(ci.key)).key).toMatchObject({ id: ci.id, limits: ci.limits, budgetRemaining: 5 });
  });

  it('update answers the record; the running daemon sees the new limits at the next call', async () => {
    const out = await ok('key', 'update', ci.id, '--budget', '7.5', '--rpm', 'none', '--models', 'smart-lite,smart-standard', '--expires', 'never');
    expect(out).toMatchObject({ id: ci.id, expiresAt: null, limits: { budget: 7.5, budgetPeriod: 'day', rpm: null, tpm: 20000, models: ['smart-lite', 'smart-standard'] } });
    expect(out.key).toBeUndefined();
    expect((await entitlements(ci.key)).key).toMatchObject({ limits: out.limits, expiresAt: null, budgetRemaining: 7.5 });
  });

  it('list USER → {"items":[Key]}, the same records the API shows', async () => {
    const api = await (await d.fetch('/keys', { key: ada.key })).json();
    // the admin CLI reads the store, where the daemon writes keys' lastUsedAt once per flush
    // interval (docs/foundation.md): after a flush both show the same records
    await flushKeyUses(d.daemon.ctx.db);
    const out = await ok('key', 'list', ada.email);
    expect(Object.keys(out)).toEqual(['items']);
    expect(out).toEqual(api);
    const human = await admin('key', 'list', ada.email);
    expect(human.code).toBe(0);
    expect(human.stdout.split('\n')[0].split('\t')[0]).toBe('ID');
  });

  it('--expires 12h is twelve hours from now (the expiry itself: test/api/keys.test.ts)', async () => {
    const k = await ok('key', 'create', ada.email, '--name', 'brief', '--expires', '12h');
    expect(Math.abs(Date.parse(k.expiresAt) - (Date.now() + 12 * 3_600_000))).toBeLessThan(60_000);
    expect((await d.fetch('/gateway/entitlements', { key: k.key })).status).toBe(200);
  });

  it('bad flags exit 2 naming the flag and change nothing; unknown keys exit 1', async () => {
    const before = await ok('key', 'list', ada.email);
    for (const args of [
      ['--budget', '-3'],
      ['--budget-period', 'fortnight'],
      ['--rpm', '0'],
      ['--tpm', 'lots'],
      ['--models', ','],
      ['--expires', '2001-01-01'],
      ['--models', 'not a model'],
      ['--budget', '2000000'],
    ]) {
      const r = await admin('key', 'update', ci.id, ...args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(args[0]);
    }
    expect((await admin('key', 'update', ci.id)).code).toBe(2);
    expect(await ok('key', 'list', ada.email)).toEqual(before);
    const missing = await admin('key', 'update', 'key_nope', '--rpm', '5');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('KEY_NOT_FOUND');
  }, 90_000);

  it('revoke: {id,revoked:true}; keys made with the key go with it', async () => {
    const child = await (await d.fetch('/keys', { method: 'POST', key: ci.key, json: { name: 'job' } })).json();
    expect(child.parentKeyId).toBe(ci.id);
    expect(await ok('key', 'revoke', ci.id)).toEqual({ id: ci.id, revoked: true });
    for (const k of [ci.key, child.key]) expect((await d.fetch('/gateway/entitlements', { key: k })).status).toBe(401);
  });
});
