import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { ANSI, cliEnv, json, type CliEnv } from './cli-env.js';

/** agw login / logout / whoami, credential storage, precedence and profiles. */
let d: TestDaemon;
let alice: TestUser;
let bob: TestUser;
const envs: CliEnv[] = [];
const fresh = (env: Record<string, string | undefined> = {}) => {
  const e = cliEnv({ NO_COLOR: undefined, ...env });
  envs.push(e);
  return e;
};

beforeAll(async () => {
  d = await startTestDaemon({ yaml: 'wallet: { selfTopup: true }\n' });
  // free tier: no monthly allowance, so GET /wallet is stable between two calls (for a wallet
  // with an allowance it never drew on, the daemon reports lastAllowanceAt = now)
  alice = await d.user({ tier: 'free', balance: 12 });
  bob = await d.user({ tier: 'free', balance: 3 });
});
afterAll(async () => {
  for (const e of envs) e.cleanup();
  await d?.close();
});

const apiJson = async (path: string, key: string) => (await d.fetch(path, { key })).json();

describe('agw login --with-token', () => {
  test('stores the key in a 0600 file in a 0700 folder with a one-line notice, and whoami names the user', async () => {
    const env = fresh();
    const r = await env.run(['login', '--with-token', '--base-url', d.url], { input: `${alice.key}\n` });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`logged in to ${d.url}`);
    expect(r.stdout).not.toMatch(ANSI);
    const notice = r.stderr.trim().split('\n');
    expect(notice).toHaveLength(1);
    expect(notice[0]).toMatch(/^notice: .*credentials saved to .*credentials\.json \(mode 0600\)$/);

    const file = join(env.configDir, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(env.configDir).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8')).profiles.default.apiKey).toBe(alice.key);
    expect(JSON.parse(readFileSync(join(env.configDir, 'config.json'), 'utf8'))).toEqual({
      defaultProfile: 'default',
      profiles: { default: { baseUrl: d.url } },
    });

    const again = await env.run(['login', '--with-token'], { input: alice.key });
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(''); // the notice comes once, when the file is created

    const who = await env.run(['whoami', '--json']);
    expect(who.code).toBe(0);
    expect(json(who)).toEqual({ profile: 'default', baseUrl: d.url, kind: 'key', source: 'file', userId: alice.id, email: alice.email, tier: 'free', credentials: 'key' });
    const text = await env.run(['whoami']);
    // issue #33 item 15: the email first, the id beside it
    expect(text.stdout).toContain(`user         ${alice.email} (${alice.id})`);
    expect(text.stdout).not.toMatch(ANSI);
  });

  test('a wrong key is refused (exit 1, nothing stored); a token that is not agw_ or an empty stdin is a usage error (exit 2)', async () => {
    const env = fresh();
    const wrong = await env.run(['login', '--with-token', '--base-url', d.url], { input: 'agw_not_a_real_key' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('error UNAUTHORIZED');
    expect(wrong.stderr).toContain('hint: the key given to agw login was refused');
    expect(() => statSync(join(env.configDir, 'credentials.json'))).toThrow();
    expect((await env.run(['login', '--with-token', '--base-url', d.url], { input: 'sk-something' })).code).toBe(2);
    expect((await env.run(['login', '--with-token', '--base-url', d.url], { input: '' })).code).toBe(2);
  });
});

describe('precedence', () => {
  test('AGW_API_KEY beats stored credentials; --base-url beats AGW_BASE_URL beats the profile', async () => {
    const env = fresh();
    expect((await env.run(['login', '--with-token', '--base-url', d.url], { input: alice.key })).code).toBe(0);
    const asBob = await env.run(['wallet', '--json'], { env: { AGW_API_KEY: bob.key } });
    expect(json(asBob)).toEqual(await apiJson('/wallet', bob.key));

    const dead = 'http://127.0.0.1:9';
    const viaEnv = await env.run(['wallet'], { env: { AGW_BASE_URL: dead } });
    expect(viaEnv.code).toBe(1);
    expect(viaEnv.stderr).toContain(`error NETWORK_ERROR: cannot reach ${dead}`);
    expect(viaEnv.stderr).toContain('hint: is the daemon running?');
    const flagWins = await env.run(['wallet', '--json', '--base-url', `${d.url}/api/`], { env: { AGW_BASE_URL: dead } });
    expect(flagWins.code).toBe(0);
    expect(json(flagWins)).toEqual(await apiJson('/wallet', alice.key));
  });
});

describe('profiles', () => {
  test('login --profile keeps a second identity; profile list / use switch; logout forgets one profile', async () => {
    const env = fresh();
    expect((await env.run(['login', '--with-token', '--base-url', d.url], { input: alice.key })).code).toBe(0);
    expect((await env.run(['login', '--with-token', '--profile', 'work', '--base-url', d.url], { input: bob.key })).code).toBe(0);

    expect(json(await env.run(['wallet', '--json', '--profile', 'work']))).toEqual(await apiJson('/wallet', bob.key));
    expect(json(await env.run(['wallet', '--json']))).toEqual(await apiJson('/wallet', alice.key));

    const listed = json<{ defaultProfile: string; profiles: { name: string; credentials: string; store: string }[] }>(await env.run(['profile', 'list', '--json']));
    expect(listed.defaultProfile).toBe('default');
    expect(listed.profiles.map((p) => [p.name, p.credentials, p.store])).toEqual([['default', 'key', 'file'], ['work', 'key', 'file']]);

    expect((await env.run(['profile', 'use', 'work'])).code).toBe(0);
    expect(json<{ userId: string }>(await env.run(['whoami', '--json'])).userId).toBe(bob.id);
    expect((await env.run(['profile', 'use', 'nope'])).code).toBe(1);

    const out = await env.run(['logout']);
    expect(out.code).toBe(0);
    expect(out.stdout).toBe('logged out of profile work\n');
    const gone = await env.run(['whoami']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('error NOT_LOGGED_IN');
    expect(gone.stderr).toContain('hint: log in');
    const stored = JSON.parse(readFileSync(join(env.configDir, 'credentials.json'), 'utf8'));
    expect(Object.keys(stored.profiles)).toEqual(['default']);
    expect(json<{ userId: string }>(await env.run(['whoami', '--json', '--profile', 'default'])).userId).toBe(alice.id);
  });

  test('login --email stores the portal session (password from stdin); a wrong password stores nothing', async () => {
    const env = fresh({ AGW_BASE_URL: d.url });
    const bad = await env.run(['login', '--email', alice.email], { input: 'wrong password\n' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('error INVALID_CREDENTIALS');
    const ok = await env.run(['login', '--email', alice.email, '--json'], { input: `${alice.password}\n` });
    expect(ok.code).toBe(0);
    expect(json(ok)).toMatchObject({ profile: 'default', kind: 'session', store: 'file', email: alice.email });
    const stored = JSON.parse(readFileSync(join(env.configDir, 'credentials.json'), 'utf8'));
    expect(stored.profiles.default.session.cookie).toMatch(/^\S{20,}$/);
    const who = json(await env.run(['whoami', '--json']));
    expect(who).toMatchObject({ kind: 'session', userId: alice.id, email: alice.email, credentials: 'session' });
    // with a key stored too, whoami says both and which one commands use
    expect((await env.run(['login', '--with-token'], { input: alice.key })).code).toBe(0);
    const both = await env.run(['whoami']);
    expect(both.stdout).toContain('credentials  key+session (commands use the key; the session for agw logout and the portal)');
    expect(JSON.stringify(who)).not.toContain(stored.profiles.default.session.cookie);

    // a state-changing call with the session carries its CSRF token; logout ends the session on the server
    expect(json<{ balance: number }>(await env.run(['wallet', 'topup', '1', '--json'])).balance).toBe(13);
    const cookie = `service_session=${stored.profiles.default.session.cookie}`;
    expect((await d.fetch('/portal/me', { headers: { cookie } })).status).toBe(200);
    expect((await env.run(['logout'])).code).toBe(0);
    expect((await d.fetch('/portal/me', { headers: { cookie } })).status).toBe(401);
  });
});
