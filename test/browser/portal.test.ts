import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { insertUsage, prng, type UsageSeed } from '../helpers/seed-usage.js';
import { createProject } from '../../src/daemon/store/projects.js';
import { ARTIFACTS, openDesktopPage } from '../helpers/chromium.js';
const DAY = 86_400_000;

/** The machine-readable value of a <data> element inside `selector`. */
async function dataValue(page: Page, selector: string): Promise<number> {
  return Number(await page.locator(`${selector} data`).first().getAttribute('value'));
}

describe('web portal in headless Chromium', () => {
  let td: TestDaemon;
  let alice: TestUser;
  let browser: Browser;
  let page: Page;
  const foreign: string[] = [];

  beforeAll(async () => {
    td = await startTestDaemon();
    alice = await td.user({ tier: 'pro', balance: 25 });
    const db = td.daemon.ctx.db;
    const apollo = (await createProject(db, alice.id, 'Apollo')).uid;
    const hermes = (await createProject(db, alice.id, 'Hermes <beta>')).uid;
    const rnd = prng(7);
    const rows: UsageSeed[] = [];
    const now = Date.now();
    for (let i = 0; i < 400; i++) {
      const status = rnd() < 0.05 ? 'failed' : 'finalized';
      const raw = status === 'failed' ? 0 : Math.floor(rnd() * 40_000_000);
      rows.push({
        userId: alice.id,
        providerId: ['openai', 'anthropic', 'groq'][Math.floor(rnd() * 3)],
        status,
        createdAt: now - Math.floor(rnd() * 60 * DAY),
        rawNano: raw,
        customerNano: raw * 2,
        projectId: [null, apollo, hermes][Math.floor(rnd() * 3)],
      });
    }
    await insertUsage(db, rows);
    ({ browser, page } = await openDesktopPage(td.url, foreign));
    page.on('dialog', (d) => d.accept());
  });
  afterAll(async () => {
    await browser?.close();
    await td?.close();
  });

  const api = (path: string) => page.evaluate((p) => fetch(p, { credentials: 'same-origin' }).then((r) => r.json()), path);

  test('logs in with the keyboard and lands on the dashboard', async () => {
    await page.goto(`${td.url}/`);
    await expect(page.getByRole('heading', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill(alice.password);
    await Promise.all([page.waitForURL(`${td.url}/`), page.getByLabel('Password').press('Enter')]);
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.locator('#total-customer data').waitFor();
  });

  test('the spend figures on the dashboard equal the API’s, for 30d and after switching to 7d', async () => {
    for (const range of ['30d', '7d']) {
      if (range !== '30d') {
        const before = await page.locator('#total-calls data').getAttribute('value');
        await page.getByLabel('Range').selectOption(range);
        await page.waitForFunction((b) => document.querySelector('#total-calls data')?.getAttribute('value') !== b, before);
      }
      const s = await api(`/api/portal/spend/summary?range=${range}`);
      expect(s.totals.calls).toBeGreaterThan(0);
      expect(await dataValue(page, '#total-calls')).toBe(s.totals.calls);
      expect(await dataValue(page, '#total-failures')).toBe(s.totals.failures);
      expect(await dataValue(page, '#total-raw')).toBe(s.totals.rawCost);
      expect(await dataValue(page, '#total-customer')).toBe(s.totals.customerCost);
      expect(await page.locator('#total-customer').innerText()).toMatch(/^\$[0-9,]+\.\d{2}$/);
      await page.waitForFunction((n) => document.querySelectorAll('#provider-rows tr').length === n, s.byProvider.length);
      for (const p of s.byProvider) {
        const row = page.locator(`#provider-rows tr[data-provider="${p.providerId}"]`);
        expect(Number(await row.locator('td:nth-child(5) data').getAttribute('value'))).toBe(p.customerCost);
        expect(Number(await row.locator('td:nth-child(2) data').getAttribute('value'))).toBe(p.calls);
      }
      expect(await page.locator('#project-rows tr').count()).toBe(s.byProject.length);
      await expect(page.locator('#project-rows').innerText()).resolves.toContain('Hermes <beta>');
      const days = Number(range.slice(0, -1)) + 1;
      await page.waitForFunction((n) => document.querySelectorAll('#daily-chart rect.b').length === n, days);
    }
  });

  test('wallet, entitlements and projects are shown', async () => {
    await page.locator('#wallet-balance data').waitFor();
    expect(await dataValue(page, '#wallet-balance')).toBe(25);
    await page.locator('#tx-rows tr').first().waitFor();
    await page.locator('#ent-quotas meter').first().waitFor();
    expect(await page.locator('#ent-quotas meter').count()).toBe(7);
    await expect(page.locator('#ent-tier').innerText()).resolves.toContain('Pro');
    await page.locator('#projects-rows button').first().waitFor();
    await page.getByRole('button', { name: 'Spend of Apollo' }).click();
    await page.locator('#project-spend-total data').waitFor();
    const uid = (await api('/api/portal/projects')).items.find((p: { name: string }) => p.name === 'Apollo').uid;
    const ps = await api(`/api/portal/spend/projects/${uid}?range=7d`);
    expect(await dataValue(page, '#project-spend-total')).toBe(ps.totals.customerCost);
  });

  test('creates a key (shown once, works), then revokes it (stops working)', async () => {
    await page.getByLabel('New key name').fill('ci-laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key:not([hidden])').waitFor();
    const key = (await page.locator('#new-key-value').innerText()).trim();
    expect(key).toMatch(/^agw_[0-9a-f]{12}_/);
    expect((await td.fetch('/wallet', { key })).status).toBe(200);
    const revoke = page.getByRole('button', { name: 'Revoke key ci-laptop' });
    await revoke.waitFor();
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'portal-dashboard.png'), fullPage: true });
    await revoke.click();
    await page.waitForFunction(() => [...document.querySelectorAll('#key-rows tr.revoked')].some((r) => r.textContent?.includes('ci-laptop')));
    expect((await td.fetch('/wallet', { key })).status).toBe(401);
  });

  test('is legible on a phone and loads nothing from elsewhere', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.locator('#total-customer data').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await page.screenshot({ path: join(ARTIFACTS, 'portal-dashboard-phone.png'), fullPage: true });
    expect(foreign).toEqual([]);
  });

  test('the wallet says how to get credit while self top-up is off, and tops up with the form when it is on', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await expect(page.locator('#topup-off').innerText()).resolves.toContain(`agw admin wallet credit ${alice.email} AMOUNT`);
    expect(await page.locator('#topup-form').count()).toBe(0);
    td.daemon.ctx.config.wallet.selfTopup = true; // the page is rendered from the config
    try {
      await page.reload();
      await page.locator('#wallet-balance data').waitFor();
      const before = await dataValue(page, '#wallet-balance');
      await page.getByLabel('Add credit (USD)').fill('5');
      await page.getByRole('button', { name: 'Top up' }).click();
      await page.waitForFunction((b) => Number(document.querySelector('#wallet-balance data')?.getAttribute('value')) === b + 5, before);
      expect((await (await td.fetch('/wallet', { key: alice.key })).json()).balance).toBe(before + 5);
    } finally {
      td.daemon.ctx.config.wallet.selfTopup = false;
    }
  });

  test('a page on another origin of the same host cannot log you out (Sec-Fetch-Site: same-site)', async () => {
    const evil: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<form method="post" action="${td.url}/api/portal/logout"><input type="hidden" name="x" value="1"></form><script>document.forms[0].submit()</script>`);
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const answer = page.waitForResponse((r) => r.url() === `${td.url}/api/portal/logout`);
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const res = await answer;
      expect(res.status()).toBe(403);
      expect(await res.request().headerValue('sec-fetch-site')).toBe('same-site');
      await page.goto(`${td.url}/`);
      await page.getByRole('heading', { name: 'Dashboard' }).waitFor(); // still signed in
    } finally {
      await new Promise((r) => evil.close(r));
    }
  });

  test('logs out, and a login with ?next= returns to that path', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await Promise.all([page.waitForURL(/\/login$/), page.getByRole('button', { name: 'Log out' }).click()]);
    expect((await page.evaluate(() => fetch('/api/portal/me').then((r) => r.status)))).toBe(401);
    await page.goto(`${td.url}/login?next=${encodeURIComponent('/api/portal/me')}`);
    await page.getByLabel('Email').fill(alice.email);
    await page.getByLabel('Password').fill(alice.password);
    await Promise.all([page.waitForURL(`${td.url}/api/portal/me`), page.getByRole('button', { name: 'Sign in' }).click()]);
    expect(JSON.parse(await page.locator('body').innerText())).toMatchObject({ userId: alice.id });
  });
});
