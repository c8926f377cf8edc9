import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createSession } from '../../src/daemon/auth/sessions.js';
import { AGW_BIN } from '../helpers/cli.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { cliEnv, json, type CliEnv } from './cli-env.js';

/** `agw login` in the browser (PKCE, loopback redirect), driven by a "browser" that has a portal session. */
let d: TestDaemon;
let user: TestUser;
let env: CliEnv;

beforeAll(async () => {
  d = await startTestDaemon();
  user = await d.user({ tier: 'free', balance: 4 });
  env = cliEnv({ AGW_BASE_URL: d.url });
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

/** Runs `agw login --no-browser`, opens the printed URL as the signed-in browser would, resolves with the exit. */
async function browserLogin(cookie: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [AGW_BIN, 'login', '--no-browser'], {
    cwd: env.dir,
    env: { ...process.env, NO_COLOR: '1', AGW_API_KEY: undefined, AGW_CONFIG_DIR: env.configDir, AGW_NO_KEYRING: '1', AGW_BASE_URL: d.url },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (c) => {
      stderr += c;
      const m = /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    void exited.then(() => reject(new Error(`login exited early: ${stderr}`)));
  });
  const auth = await fetch(url, { headers: { cookie }, redirect: 'manual' });
  expect(auth.status).toBe(302);
  const callback = auth.headers.get('location')!;
  expect(callback).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
  expect((await fetch(callback)).status).toBe(200);
  return { code: await exited, stdout, stderr };
}

test('agw login stores OAuth tokens; an expired access token is refreshed silently; a dead refresh token asks to log in', async () => {
  const session = await createSession(d.daemon.ctx, user.id);
  const login = await browserLogin(`service_session=${session.id}`);
  expect(login.code).toBe(0);
  expect(login.stdout).toContain(`logged in to ${d.url} as ${user.id}`);
  const who = json(await env.run(['whoami', '--json']));
  expect(who).toEqual({ profile: 'default', baseUrl: d.url, kind: 'oauth', source: 'file', userId: user.id, email: user.email, tier: 'free', credentials: 'oauth' });
  // issue #33 item 12: one login is enough, `agw spend` included
  const spent = await env.run(['spend', '--json']);
  expect(spent.code, spent.stderr).toBe(0);
  expect(json<{ totals: { calls: number } }>(spent).totals.calls).toBe(0);

  const file = join(env.configDir, 'credentials.json');
  const stored = () => JSON.parse(readFileSync(file, 'utf8')).profiles.default.oauth as { accessToken: string; refreshToken: string; expiresAt: number };
  const first = stored();
  expect(first.expiresAt).toBeGreaterThan(Date.now());
  expect(first.refreshToken).toBeTruthy();

  const expire = (patch: Partial<typeof first>) => {
    const all = JSON.parse(readFileSync(file, 'utf8'));
    Object.assign(all.profiles.default.oauth, { expiresAt: Date.now() - 60_000, ...patch });
    writeFileSync(file, JSON.stringify(all));
  };
  expire({});
  const wallet = await env.run(['wallet', '--json']);
  expect(wallet.code).toBe(0);
  expect(json(wallet)).toEqual(await (await d.fetch('/wallet', { key: user.key })).json());
  const second = stored();
  expect(second.accessToken).not.toBe(first.accessToken);
  expect(second.refreshToken).not.toBe(first.refreshToken);
  expect(second.expiresAt).toBeGreaterThan(Date.now());

  expire({ refreshToken: 'not-a-refresh-token' });
  const dead = await env.run(['wallet']);
  expect(dead.code).toBe(1);
  expect(dead.stderr).toContain('error LOGIN_EXPIRED');
  expect(dead.stderr).toContain('hint: log in again: agw login');
});
