import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { formatUsd } from '../../src/shared/format.js';
import { artifact, launchChromium } from '../helpers/chromium.js';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';

/**
 * Issue #33 items 14 and 17 in headless Chromium: one definition of a call and a failure on
 * the dashboard and the Activity page (stated on both), one money format; Activity's spend
 * and tokens per model with a chart, endpoint and key-name columns, search by request id,
 * the export; the wallet card's API-call debits grouped per day and model.
 */
describe('Activity and the dashboard, side by side', () => {
  let f: GatewayFixture;
  let ada: TestUser;
  let browser: Browser;
  let page: Page;
  const ids: string[] = [];
  let refusedId = '';

  beforeAll(async () => {
    f = await startGatewayFixture();
    ada = await f.d.user({ tier: 'free', balance: 5 });
    const made = await f.d.fetch('/keys', { method: 'POST', key: ada.key, json: { name: 'ci-bot' } });
    const bot = (await made.json()).key as string;
    const call = async (key: string, model: string) => {
      const r = await f.d.fetch('/gateway/chat', { method: 'POST', key, json: { model, max_tokens: 50, messages: [{ role: 'user', content: `Hello from ${model}` }] } });
      await r.text();
      return { status: r.status, id: r.headers.get('x-request-id')! };
    };
    for (let i = 0; i < 3; i++) {
      const c = await call(bot, 'gpt-4o-mini');
      expect(c.status).toBe(200);
      ids.push(c.id);
    }
    const other = await call(ada.key, 'claude-3-5-haiku-latest');
    expect(other.status).toBe(200);
    ids.push(other.id);
    const refused = await call(ada.key, 'smart-premium'); // outside the free tier
    expect(refused.status).toBe(403);
    refusedId = refused.id;
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto(`${f.d.url}/login?next=/activity`);
    await page.getByLabel('Email').fill(ada.email);
    await page.getByLabel('Password').fill(ada.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/activity$/);
  });
  afterAll(async () => {
    await browser?.close();
    await f?.close();
  });

  const api = (path: string) => page.evaluate((p) => fetch(p, { credentials: 'same-origin' }).then((r) => r.json()), path);

  test('spend and tokens per model, with a chart; endpoint and key name on every call', async () => {
    await page.goto(`${f.d.url}/activity?days=30`);
    const log = (await api('/api/requests?limit=50')).items as { id: string; model: string; promptTokens: number; completionTokens: number; cost: number; endpoint: string; keyId: string | null }[];
    const mini = log.filter((r) => r.model === 'gpt-4o-mini');
    expect(mini).toHaveLength(3);
    const row = page.locator('#by-model tr[data-model="openai/gpt-4o-mini"] td');
    const cells = await row.allInnerTexts();
    expect(cells[2]).toBe('3');
    expect(Number(await row.nth(5).locator('data').getAttribute('value'))).toBe(mini.reduce((a, r) => a + r.promptTokens, 0));
    expect(Number(await row.nth(6).locator('data').getAttribute('value'))).toBe(mini.reduce((a, r) => a + r.completionTokens, 0));
    expect(Number(await row.nth(7).locator('data').getAttribute('value'))).toBeCloseTo(mini.reduce((a, r) => a + r.cost, 0), 9);
    expect(await page.locator('#models-chart rect.b').count()).toBe(2); // the two models that cost something

    const first = page.locator(`#calls tr[data-id="${ids[0]}"]`);
    expect(await first.locator('td[data-col="endpoint"]').innerText()).toBe('chat');
    expect(await first.locator('td[data-col="key"]').innerText()).toBe('ci-bot');
    expect(await page.locator(`#calls tr[data-id="${ids[3]}"] td[data-col="key"]`).innerText()).toBe('test');

    // one money format: what the page shows is the shared format of the exact value
    const cost = page.locator(`#calls tr[data-id="${ids[0]}"] td`).nth(6).locator('data');
    expect(await cost.innerText()).toBe(formatUsd(Number(await cost.getAttribute('value'))));
    await page.screenshot({ path: artifact('activity-by-model.png'), fullPage: true });
  });

  test('a request id typed in the search goes to that call; export downloads the filtered log', async () => {
    await page.goto(`${f.d.url}/activity`);
    await page.fill('#f-id', ids[1]);
    await Promise.all([page.waitForURL(new RegExp(`/activity/${ids[1]}$`)), page.getByRole('button', { name: 'Go to the call' }).click()]);
    expect(await page.locator('#d-model').innerText()).toBe('gpt-4o-mini');

    await page.goto(`${f.d.url}/activity?endpoint=chat&model=gpt-4o-mini`);
    const href = await page.locator('#export a', { hasText: 'CSV' }).getAttribute('href');
    expect(href).toContain('/api/requests/export?format=csv');
    const csv = await page.evaluate((h) => fetch(h!, { credentials: 'same-origin' }).then((r) => r.text()), href);
    for (const id of ids.slice(0, 3)) expect(csv).toContain(id);
    expect(csv).not.toContain(ids[3]);
    expect(csv).not.toContain(refusedId);
  });

  test('one definition of a call: the same sentence on both pages, and the same number of calls and failures', async () => {
    await page.goto(`${f.d.url}/activity?days=30`);
    const definition = await page.locator('#call-definition').innerText();
    expect(definition).toContain('A call is a request that reached a provider');
    const activity = { calls: await page.locator('#total-calls data').getAttribute('value'), failed: await page.locator('#total-failed data').getAttribute('value') };
    expect(activity).toEqual({ calls: '4', failed: '0' });
    expect(await page.locator('#total-refused data').getAttribute('value')).toBe('1');

    await page.goto(`${f.d.url}/`);
    expect(await page.locator('#call-definition').innerText()).toBe(definition);
    await expect.poll(() => page.locator('#total-calls').innerText()).toBe('4');
    expect(await page.locator('#total-failures').innerText()).toBe('0');
  });

  test('the wallet card groups API-call debits: one line per day and model', async () => {
    await page.goto(`${f.d.url}/`);
    const group = page.locator('#tx-rows tr[data-group$=" openai/gpt-4o-mini"]');
    await group.waitFor();
    expect(await group.count()).toBe(1);
    expect(await group.getAttribute('data-calls')).toBe('3');
    expect(await group.locator('td').nth(1).innerText()).toBe('API calls: openai/gpt-4o-mini × 3');
    const tx = (await api('/api/wallet/transactions?limit=50')).items as { type: string; model?: string; amount: number }[];
    const debits = tx.filter((t) => t.type === 'usage' && t.model === 'gpt-4o-mini');
    expect(debits).toHaveLength(3);
    expect(Number(await group.locator('td').nth(2).locator('data').getAttribute('value'))).toBeCloseTo(debits.reduce((a, t) => a + t.amount, 0), 9);
    expect(await page.locator('#tx-rows tr[data-group$=" anthropic/claude-3-5-haiku-latest"]').getAttribute('data-calls')).toBe('1');
    await page.screenshot({ path: artifact('dashboard-wallet-grouped.png'), fullPage: true });
  });
});
