import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { AGW_BIN, runCli } from '../helpers/cli.js';
import { oauthFixture, type OAuthFixture } from '../helpers/oauth.js';
import { loginWithBrowser, refreshTokens } from '../../src/cli/oauth-login.js';
import { CliError } from '../../src/cli/errors.js';

/**
 * `agw login` in the browser, end to end. The "browser" is scripted: an HTTP client that
 * opens the authorize URL with a portal session cookie and follows the 302 to the CLI's
 * loopback port. (The subprocess test needs the built CLI: npm run build.)
 */
describe('agw login (OAuth, browser)', () => {
  let d: TestDaemon;
  let fx: OAuthFixture;
  let configDir: string;

  beforeAll(async () => {
    d = await startTestDaemon();
    fx = await oauthFixture(d, { balance: 7 });
    configDir = mkdtempSync(join(tmpdir(), 'agw-cli-login-'));
  });
  afterAll(async () => {
    await d?.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  /** The scripted browser: authorize with the session cookie, then deliver the redirect to the CLI. */
  async function browser(url: string): Promise<void> {
    const res = await fetch(url, { headers: { cookie: fx.cookie }, redirect: 'manual' });
    if (res.status !== 302) throw new Error(`authorize answered ${res.status}`);
    const callback = res.headers.get('location')!;
    const cb = await fetch(callback);
    if (cb.status !== 200) throw new Error(`the CLI's callback answered ${cb.status}`);
  }

  test('loginWithBrowser: PKCE login through the loopback redirect, tokens that work, silent refresh', async () => {
    let opened = '';
    const t = await loginWithBrowser({
      baseUrl: `${d.url}/api`,
      openBrowser: async (url) => {
        opened = url;
        setImmediate(() => void browser(url));
        return true;
      },
      log: () => undefined,
    });
    const u = new URL(opened);
    expect(u.searchParams.get('client_id')).toBe('agw-cli');
    expect(u.searchParams.get('code_challenge_method')).toBe('S256');
    expect(u.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(t.scope).toBe('openid profile email tier');
    expect(Math.abs(t.expiresAt - (Date.now() + 900_000))).toBeLessThan(30_000);
    expect(decodeJwt(t.accessToken)).toMatchObject({ sub: fx.user.id, client_id: 'agw-cli' });
    const w = await d.fetch('/wallet', { headers: { authorization: `Bearer ${t.accessToken}` } });
    expect(w.status).toBe(200);

    const r = await refreshTokens(d.url, t.refreshToken!);
    expect(r.refreshToken).not.toBe(t.refreshToken);
    expect((await d.fetch('/wallet', { headers: { authorization: `Bearer ${r.accessToken}` } })).status).toBe(200);
    // the spent refresh token is refused with a "log in again" error
    await expect(refreshTokens(d.url, t.refreshToken!)).rejects.toMatchObject({ code: 'LOGIN_EXPIRED' });
  });

  test('without a browser it prints the URL, and the login completes from that URL', async () => {
    const lines: string[] = [];
    const done = loginWithBrowser({
      baseUrl: d.url,
      openBrowser: () => false,
      log: (l) => {
        lines.push(l);
        const m = /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(l);
        if (m) void browser(m[1]);
      },
    });
    const t = await done;
    expect(lines.join('\n')).toMatch(/Open this URL in your browser/);
    expect(t.accessToken.split('.')).toHaveLength(3);
  });

  test('a login nobody finishes times out with LOGIN_TIMEOUT', async () => {
    const err = await loginWithBrowser({ baseUrl: d.url, openBrowser: () => true, log: () => undefined, timeoutMs: 300 }).catch((e) => e);
    expect(err).toBeInstanceOf(CliError);
    expect(err.code).toBe('LOGIN_TIMEOUT');
  });

  test('agw login (the real CLI) stores the tokens; an expired access token is refreshed silently', async () => {
    const env = { AGW_CONFIG_DIR: configDir, AGW_NO_KEYRING: '1', DISPLAY: '', WAYLAND_DISPLAY: '', AGW_BASE_URL: d.url };
    const child = spawn(process.execPath, [AGW_BIN, 'login', '--json'], { env: { ...process.env, NO_COLOR: '1', AGW_API_KEY: undefined, ...env } });
    let stdout = '';
    let stderr = '';
    let browsed: Promise<void> | undefined;
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => {
      stderr += c;
      const m = /(http:\/\/\S+\/api\/oauth\/authorize\?\S+)/.exec(stderr);
      if (m && !browsed) browsed = browser(m[1]);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    await browsed;
    expect(stderr).toMatch(/Open this URL in your browser/);
    expect(code, stderr).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ kind: 'oauth', store: 'file' });

    const file = join(configDir, 'credentials.json');
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { profiles: Record<string, { oauth: { accessToken: string; refreshToken: string; expiresAt: number } }> };
    const [profile] = Object.keys(stored.profiles);
    const first = stored.profiles[profile].oauth;
    expect(decodeJwt(first.accessToken).sub).toBe(fx.user.id);

    const wallet = await runCli(['wallet', '--json'], { env });
    expect(wallet.code, wallet.stderr).toBe(0);
    expect(JSON.parse(wallet.stdout)).toMatchObject({ balance: 7 });

    // the access token "expired": the next command refreshes it and stores the rotated tokens
    stored.profiles[profile].oauth.expiresAt = Date.now() - 60_000;
    writeFileSync(file, JSON.stringify(stored));
    const again = await runCli(['wallet', '--json'], { env });
    expect(again.code, again.stderr).toBe(0);
    const after = (JSON.parse(readFileSync(file, 'utf8')) as typeof stored).profiles[profile].oauth;
    expect(after.refreshToken).not.toBe(first.refreshToken);
    expect(after.accessToken).not.toBe(first.accessToken);
    expect(after.expiresAt).toBeGreaterThan(Date.now() + 800_000);
  });
});
