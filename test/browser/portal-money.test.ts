import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { insertUsage } from '../helpers/seed-usage.js';
import { bundle, json, publishJson } from '../api/skills-helpers.js';
import { formatUsd } from '../../src/shared/format.js';

/**
 * Issue 14 points 12 and 14 in the portal, in headless Chromium: which models unified chat
 * serves, the allowance card's label, what the allowance paid, one money and date format,
 * and a skill purchase counted in "Charged".
 */
const CHROMIUM = process.env.AGW_CHROMIUM ?? '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const DATE = /^\d{4}-\d\d-\d\d \d\d:\d\d UTC$/;

describe('portal: money, allowance and models as they are', () => {
  let td: TestDaemon;
  let ada: TestUser;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    // google has a key here, xai none
    td = await startTestDaemon({ env: { AGW_PROVIDER_GOOGLE_KEY: 'g-test-key-0123456789' } });
    ada = await td.user({ tier: 'pro', balance: 10 }); // pro: a $5 monthly allowance
    const owner = await td.user({ tier: 'free' });
    const skill = (await json(await publishJson(td, owner.key, { version: '1.0.0', price: 6 }, bundle('portal-skill')))).id;
    const bought = await td.fetch(`/skills/${skill}/install`, { method: 'POST', key: ada.key });
    if (bought.status !== 200) throw new Error(await bought.text());
    const now = Date.now();
    await insertUsage(td.daemon.ctx.db, [
      { userId: ada.id, providerId: 'openai', status: 'finalized', createdAt: now - 60_000, rawNano: 8_000_000, customerNano: 16_000_000 },
      { userId: ada.id, providerId: 'anthropic', status: 'finalized', createdAt: now - 120_000, rawNano: 1_334_000, customerNano: 2_668_000 },
    ]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${td.url}/`);
    await page.getByLabel('Email').fill(ada.email);
    await page.getByLabel('Password').fill(ada.password);
    await Promise.all([page.waitForURL(`${td.url}/`), page.getByLabel('Password').press('Enter')]);
    await page.locator('#total-charged data').waitFor();
  });
  afterAll(async () => {
    await browser?.close();
    await td?.close();
  });

  const api = (path: string) => page.evaluate((p) => fetch(p, { credentials: 'same-origin' }).then((r) => r.json()), path);
  const value = async (sel: string) => Number(await page.locator(`${sel} data`).first().getAttribute('value'));

  test('"Charged" includes the skill purchase; calls and purchases are shown apart, in one money format', async () => {
    const s = await api('/api/portal/spend/summary?range=30d');
    expect(s.purchases).toEqual({ count: 1, amount: 6 });
    expect(await value('#total-customer')).toBe(s.totals.customerCost);
    expect(await value('#total-purchases')).toBe(6);
    expect(await value('#total-charged')).toBeCloseTo(s.totals.customerCost + 6, 9);
    expect(await page.locator('#total-charged').innerText()).toBe(formatUsd(s.totals.customerCost + 6));
    expect(await page.locator('#total-customer').innerText()).toBe('$0.01867'); // 4 significant digits below $1
    const rows = await page.locator('#provider-rows tr').all();
    const shown = await Promise.all(rows.map((r) => r.locator('td:nth-child(5)').innerText()));
    expect(shown.sort()).toEqual(['$0.002668', '$0.016']); // the pair, now in one format
  });

  test('the allowance card says what it shows: what is left this month, of the monthly total', async () => {
    const w = await api('/api/wallet');
    const card = page.locator('section[aria-labelledby="wallet-h"]');
    await expect(card.locator('dt').allInnerTexts()).resolves.toContain('Allowance left this month');
    await expect(card.locator('dt').allInnerTexts()).resolves.not.toContain('Monthly allowance');
    await page.locator('#wallet-allowance data').waitFor();
    expect(await value('#wallet-allowance')).toBe(w.monthlyAllowanceRemaining);
    expect(await page.locator('#wallet-allowance-total').innerText()).toBe('of $5.00 a month');
    expect(await page.locator('#wallet-allowance-of').innerText()).toMatch(/^\$5\.00 of \$5\.00 · resets \d{4}-\d\d-01$/);
    // what a new call is admitted against (no call in flight: nothing held)
    expect(w).toMatchObject({ held: 0, heldCalls: 0 });
    expect(await page.locator('#wallet-available').innerText()).toBe(`${formatUsd(w.balance + w.monthlyAllowanceRemaining)} available`);
  });

  test('the transaction list says when the allowance paid, with one date format', async () => {
    const items = (await api('/api/wallet/transactions?limit=10')).items;
    const purchase = items.find((t: { type: string }) => t.type === 'skill_purchase');
    expect(purchase).toMatchObject({ amount: -6, fromAllowance: 5 });
    const row = page.locator(`#tx-rows tr[data-tx="${purchase.id}"]`);
    await row.waitFor();
    expect(await row.locator('td:nth-child(4)').innerText()).toBe('allowance $5.00 + balance');
    expect(await row.locator('td:nth-child(3)').innerText()).toBe('-$6.00');
    const credit = page.locator(`#tx-rows tr[data-tx="${items.find((t: { type: string }) => t.type === 'credit').id}"]`);
    expect(await credit.locator('td:nth-child(4)').innerText()).toBe('');
    for (const when of await page.locator('#tx-rows tr td:first-child').allInnerTexts()) expect(when).toMatch(DATE);
  });

  test('models: every LLM provider’s are unified chat’s (issue #28), key or not', async () => {
    await page.getByText('Models for unified chat').click();
    await page.locator('#ent-models tr').first().waitFor();
    const providers = new Set((await page.locator('#ent-models tr td:first-child').allInnerTexts()).map((p) => p.replace(/ \(no key on this service\)$/, '')));
    expect([...providers]).toEqual(expect.arrayContaining(['openai', 'anthropic', 'google', 'mistral', 'xai']));
    expect(await page.locator('#ent-chat-providers').innerText()).toBe('openai, anthropic, google, groq, mistral, deepseek, xai, together, cohere, azure-openai, bedrock and vertex');
    // google has a key here, xai has none: the portal says so
    expect(await page.locator('#ent-models tr', { hasText: 'gemini-2.5-flash' }).first().locator('td:first-child').innerText()).toBe('google');
    expect(await page.locator('#ent-models tr', { hasText: 'grok-3-mini' }).locator('td:first-child').innerText()).toBe('xai (no key on this service)');
    await page.getByText('Other models, through the proxy').click();
    expect(await page.locator('#ent-proxy-models').innerText()).toContain('No other models on this tier.');
  });
});
