import { spawn } from 'node:child_process';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser } from 'playwright-core';
import { AGW_BIN } from '../helpers/cli.js';
import { launchChromium, artifact } from '../helpers/chromium.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { cliEnv, json, type CliEnv } from '../cli/cli-env.js';

/**
 * Issue #33 item 1: `agw login --no-browser` by a user who is not signed in to the portal
 * yet. The URL goes through the login form; after signing in the browser must reach the
 * CLI's loopback callback (the portal's own CSP `form-action` once blocked that redirect).
 */
let d: TestDaemon;
let user: TestUser;
let env: CliEnv;
let browser: Browser;

beforeAll(async () => {
  d = await startTestDaemon();
  user = await d.user({ tier: 'free', balance: 4 });
  env = cliEnv({ AGW_BASE_URL: d.url });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  env?.cleanup();
  await d?.close();
});

test('a user without a portal session signs in on the login form and `agw login` finishes', async () => {
  const child = spawn(process.execPath, [AGW_BIN, 'login', '--no-browser'], {
    cwd: env.dir,
    env: { ...process.env, NO_COLOR: '1', AGW_API_KEY: undefined, AGW_CONFIG_DIR: env.configDir, AGW_NO_KEYRING: '1', AGW_BASE_URL: d.url },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  const exited = new Promise<number | null>((r) => child.on('close', r));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (c) => {
        stderr += c;
        const m = /(http:\/\/\S+\/oauth\/authorize\?\S+)/.exec(stderr);
        if (m) resolve(m[1]);
      });
      void exited.then(() => reject(new Error(`login exited early: ${stderr}`)));
    });
    const page = await (await browser.newContext()).newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|violates/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(url);
    expect(new URL(page.url()).pathname).toBe('/login');

    // a wrong password first: the form comes back with a message, still able to finish the flow
    await page.fill('#email', user.email);
    await page.fill('#password', 'not the password');
    await page.click('button[type=submit]');
    await expect.poll(() => page.locator('#login-error').count()).toBe(1);

    await page.fill('#password', user.password);
    await Promise.all([page.waitForURL(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/, { timeout: 10_000 }), page.click('button[type=submit]')]);
    await page.screenshot({ path: artifact('cli-login-callback.png') });
    expect(await page.textContent('body')).toMatch(/logged in|close/i);
    expect(violations).toEqual([]);

    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 10_000))]);
    expect(code).toBe(0);
    expect(stdout).toContain(`logged in to ${d.url} as`);
    const who = json(await env.run(['whoami', '--json']));
    expect(who).toMatchObject({ kind: 'oauth', userId: user.id });
  } finally {
    child.kill();
  }
});

test('the login form allows only a registered redirect URI of the OAuth request it returns to', async () => {
  const csp = async (next: string) => {
    const r = await fetch(`${d.url}/login?next=${encodeURIComponent(next)}`);
    expect(r.status).toBe(200);
    return /form-action ([^;]+)/.exec(r.headers.get('content-security-policy')!)![1];
  };
  const authorize = (redirect: string) => `/api/oauth/authorize?client_id=agw-cli&response_type=code&redirect_uri=${encodeURIComponent(redirect)}`;
  expect(await csp(authorize('http://127.0.0.1:41234/callback'))).toBe("'self' http://127.0.0.1:41234");
  expect(await csp(authorize('http://evil.example/callback'))).toBe("'self'");
  expect(await csp('/api/oauth/authorize?client_id=nobody&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback')).toBe("'self'");
  expect(await csp('/activity')).toBe("'self'");
});
