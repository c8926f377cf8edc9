import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { budgetPeriodKey } from '../../src/daemon/money/key-limits.js';

/** The portal's key section in headless Chromium: create with limits, edit limits, spent and last use, per-key spend, revoke. */
const CHROMIUM = process.env.AGW_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(process.cwd(), 'test-artifacts');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

describe('portal key section in headless Chromium', () => {
  let td: TestDaemon;
  let ada: TestUser;
  let browser: Browser;
  let page: Page;
  let ci: { id: string; key: string };

  const keys = (): Promise<{ items: any[] }> => page.evaluate(() => fetch('/api/keys', { credentials: 'same-origin' }).then((r) => r.json()));
  const row = (name: string) => page.locator('#key-rows tr', { hasText: name });

  beforeAll(async () => {
    td = await startTestDaemon();
    ada = await td.user({ tier: 'pro', balance: 25 });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on('dialog', (d) => d.accept());
    await page.goto(`${td.url}/`);
    await page.getByLabel('Email').fill(ada.email);
    await page.getByLabel('Password').fill(ada.password);
    await Promise.all([page.waitForURL(`${td.url}/`), page.getByLabel('Password').press('Enter')]);
    await page.locator('#key-rows tr[data-key]').first().waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await td?.close();
  });

  test('creates a key with a budget, a rate and a model allowlist; the secret is shown once', async () => {
    await page.getByLabel('New key name').fill('ci');
    await page.getByText('Limits (optional)').click();
    await page.locator('#new-budget').fill('5');
    await page.locator('#new-period').selectOption('day');
    await page.locator('#new-rpm').fill('60');
    await page.locator('#new-models').fill('smart-lite, gpt-4o-mini');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key:not([hidden])').waitFor();
    const secret = (await page.locator('#new-key-value').innerText()).trim();
    expect(secret).toMatch(/^agw_[0-9a-f]{12}_/);
    await row('ci').waitFor();
    const k = (await keys()).items.find((x) => x.name === 'ci');
    expect(k.limits).toEqual({ budget: 5, budgetPeriod: 'day', rpm: 60, tpm: null, models: ['smart-lite', 'gpt-4o-mini'] });
    ci = { id: k.id, key: secret };
    await expect(row('ci').innerText()).resolves.toMatch(/\$5\.00 \/ day[\s\S]*60 rpm[\s\S]*smart-lite, gpt-4o-mini/);
    expect((await td.fetch('/gateway/entitlements', { key: secret })).status).toBe(200);
  });

  test('edits the key’s limits: a new budget, one limit lifted, one added', async () => {
    await page.getByRole('button', { name: 'Edit limits of ci' }).click();
    await page.locator('#key-edit:not([hidden])').waitFor();
    expect(await page.locator('#edit-budget').inputValue()).toBe('5');
    expect(await page.locator('#edit-rpm').inputValue()).toBe('60');
    await page.locator('#edit-budget').fill('7.5');
    await page.locator('#edit-period').selectOption('week');
    await page.locator('#edit-rpm').fill('');
    await page.locator('#edit-tpm').fill('20000');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.locator('#key-edit[hidden]').waitFor({ state: 'attached' });
    await page.waitForFunction(() => document.querySelector('#key-rows')?.textContent?.includes('20,000 tpm'));
    const k = (await keys()).items.find((x) => x.id === ci.id);
    expect(k.limits).toEqual({ budget: 7.5, budgetPeriod: 'week', rpm: null, tpm: 20000, models: ['smart-lite', 'gpt-4o-mini'] });
    // the daemon enforces what the portal saved: the allowlist and the new limits, at once
    const e = await (await td.fetch('/gateway/entitlements', { key: ci.key })).json();
    expect(e.key.limits).toEqual(k.limits);
  });

  test('a refused change is shown next to the form and changes nothing', async () => {
    await page.getByRole('button', { name: 'Edit limits of ci' }).click();
    await page.locator('#edit-models').fill('smart-lite, not a model!');
    await page.getByRole('button', { name: 'Save limits' }).click();
    const err = page.locator('#key-error:not([hidden])');
    await err.waitFor();
    await expect(err.innerText()).resolves.toContain('limits.models');
    expect((await keys()).items.find((x) => x.id === ci.id).limits.models).toEqual(['smart-lite', 'gpt-4o-mini']);
    await page.getByRole('button', { name: 'Cancel' }).click();
  });

  test('shows what each key spent, when it was last used, and spend per key', async () => {
    const db = td.daemon.ctx.db;
    await db.run('INSERT INTO key_spend (key_id, period, spent_nusd) VALUES (?, ?, ?)', [ci.id, budgetPeriodKey('week', Date.now()), 1_250_000_000]);
    await db.run('UPDATE api_keys SET last_used_at = ? WHERE id = ?', [Date.UTC(2030, 0, 2, 3, 4), ci.id]);
    await db.run('INSERT INTO spend_key_daily (user_id, day, key_id, calls, failures, raw_nusd, customer_nusd) VALUES (?, ?, ?, 4, 1, 600000000, 1250000000)', [
      ada.id,
      Math.floor(Date.now() / 86_400_000),
      ci.id,
    ]);
    await page.reload();
    await row('ci').waitFor();
    expect(Number(await row('ci').locator('td:nth-child(4) data').getAttribute('value'))).toBe(1.25);
    await expect(row('ci').locator('td:nth-child(8)').innerText()).resolves.toContain('2030');
    const spend = page.locator(`#key-spend-rows tr[data-key-spend="${ci.id}"]`);
    await spend.waitFor();
    await expect(spend.innerText()).resolves.toContain('ci');
    expect(Number(await spend.locator('td:nth-child(5) data').getAttribute('value'))).toBe(1.25);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'portal-keys.png'), fullPage: true });
  });

  test('revokes the key: it stops working and the row says so', async () => {
    await page.getByRole('button', { name: 'Revoke key ci' }).click();
    await page.waitForFunction(() => [...document.querySelectorAll('#key-rows tr.revoked')].some((r) => r.textContent?.includes('ci')));
    expect((await td.fetch('/gateway/entitlements', { key: ci.key })).status).toBe(401);
  });

  test('fits a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await row('ci').waitFor();
    await page.getByText('Limits (optional)').click();
    expect(await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(1);
  });
});
