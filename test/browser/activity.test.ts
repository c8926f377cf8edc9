import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { artifact, openDesktopPage } from '../helpers/chromium.js';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { seedRequests } from '../helpers/seed-requests.js';

/**
 * `/activity` in headless Chromium after real gateway calls: sign in and back, the table
 * against GET /api/requests (cost = the wallet's debit), filters by the form, paging, the
 * detail page, charts, reading with JavaScript off, phone widths, the strict CSP never
 * tripped, nothing loaded from elsewhere. Screenshots go to test-artifacts/.
 */
describe('/activity in headless Chromium', () => {
  let f: GatewayFixture;
  let ada: TestUser;
  let browser: Browser;
  let ctx: BrowserContext;
  let page: Page;
  const foreign: string[] = [];
  const messages: string[] = [];
  const callIds: string[] = [];

  beforeAll(async () => {
    f = await startGatewayFixture({ yaml: 'logs:\n  bodies: true\n' });
    ada = await f.d.user({ tier: 'pro', balance: 5 });
    // older calls first (seeded, yesterday and before), then real ones: a refusal and successes
    await seedRequests(
      f.db,
      Array.from({ length: 60 }, (_, i) => ({ userId: ada.id, createdAt: Date.now() - 86_400_000 - i * 60_000, model: 'gpt-4o-mini', latencyMs: 200 + i })),
    );
    const call = async (model: string, stream = false) => {
      const r = await f.d.fetch('/gateway/chat', { method: 'POST', key: ada.key, json: { model, stream, messages: [{ role: 'user', content: `Hello from ${model}` }] } });
      await r.text();
      callIds.push(r.headers.get('x-request-id')!);
      return r.status;
    };
    expect(await call('gpt-4o-mini')).toBe(200);
    expect(await call('smart-pro', true)).toBe(200);
    expect(await call('smart-premium')).toBe(403); // outside the pro tier: refused, recorded
    expect(await call('gpt-4o-mini', true)).toBe(200);
    ({ browser, context: ctx, page } = await openDesktopPage(f.d.url, foreign));
    page.on('console', (m) => messages.push(m.text()));
  });
  afterAll(async () => {
    await browser?.close();
    await f?.close();
  });

  const api = (path: string) => page.evaluate((p) => fetch(p, { credentials: 'same-origin' }).then((r) => r.json()), path);

  test('signed out, /activity asks for a sign-in and comes back; the table is GET /api/requests', async () => {
    await page.goto(`${f.d.url}/activity`);
    await page.getByLabel('Email').fill(ada.email);
    await page.getByLabel('Password').fill(ada.password);
    await Promise.all([page.waitForURL(`${f.d.url}/activity`), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
    const list = await api('/api/requests?limit=50');
    const rows = await page.locator('#calls tbody tr').evaluateAll((trs) => trs.map((tr) => ({ id: tr.getAttribute('data-id'), status: Number(tr.getAttribute('data-status')), cost: Number(tr.querySelectorAll('td')[6].querySelector('data')!.getAttribute('value')) })));
    expect(rows).toEqual(list.items.map((x: any) => ({ id: x.id, status: x.status, cost: x.cost })));
    expect(rows.slice(0, 4).map((r) => r.id)).toEqual([...callIds].reverse());
    expect(rows[1].status).toBe(403);
    expect(rows[0].cost).toBeGreaterThan(0);
    await page.screenshot({ path: artifact('activity.png'), fullPage: true });
  });

  test('the filter form narrows the table and keeps its choices in the URL', async () => {
    await page.getByLabel('Status').selectOption('error');
    await Promise.all([page.waitForURL(/status=error/), page.getByRole('button', { name: 'Filter' }).click()]);
    const rows = await page.locator('#calls tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-id')));
    expect(rows).toEqual([callIds[2]]);
    await expect(page.getByLabel('Status').inputValue()).resolves.toBe('error');
    await page.getByRole('link', { name: 'Reset' }).click();
    await page.waitForURL(`${f.d.url}/activity`);
  });

  test('“Older” pages through the rest; the detail page shows the record and its kept bodies', async () => {
    await Promise.all([page.waitForURL(/cursor=/), page.getByRole('link', { name: 'Older' }).click()]);
    expect(await page.locator('#calls tbody tr').count()).toBe(64 - 50);
    await page.getByRole('link', { name: 'Newest' }).click();
    await page.waitForURL(`${f.d.url}/activity`);
    await Promise.all([page.waitForURL(new RegExp(`/activity/${callIds[0]}$`)), page.getByRole('link', { name: `Call ${callIds[0]}` }).click()]);
    const rec = await api(`/api/requests/${callIds[0]}`);
    expect(Number(await page.locator('#d-cost data').getAttribute('value'))).toBe(rec.cost);
    expect(await page.locator('#d-model').innerText()).toBe('gpt-4o-mini');
    expect(Number(await page.locator('#d-prompt data').getAttribute('value'))).toBe(rec.promptTokens);
    await expect(page.locator('#req-body').innerText()).resolves.toContain('Hello from gpt-4o-mini');
    await expect(page.locator('#res-body').innerText()).resolves.toContain('Echo: Hello from gpt-4o-mini');
    await page.screenshot({ path: artifact('activity-detail.png'), fullPage: true });
  });

  test('charts: today’s bar counts the calls made today; the latency chart has today’s p50 and p95', async () => {
    await page.goto(`${f.d.url}/activity`);
    const daily = await api('/api/requests/daily?days=7');
    const bars = await page.locator('#calls-chart rect.b').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
    // calls as the dashboard counts them (issue #33 item 14): the refused request of today is not a call
    expect(bars).toEqual(daily.days.map((d: any) => d.calls));
    expect(daily.days.at(-1).requests).toBe(4);
    expect(bars.at(-1)).toBe(4 - daily.days.at(-1).refused);
    expect(daily.days.at(-1).refused).toBeGreaterThan(0);
    const failures = await page.locator('#errors-chart rect.b').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
    expect(failures).toEqual(daily.days.map((d: any) => d.failed + d.refused));
    const dots = await page.locator('#latency-chart circle').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
    expect(dots).toContain(daily.days.at(-1).latencyP50Ms);
    expect(dots).toContain(daily.days.at(-1).latencyP95Ms);
  });

  test('reads without JavaScript, fits a phone, trips no CSP rule, loads nothing from elsewhere', async () => {
    const state = await ctx.storageState();
    const nojs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 360, height: 740 }, storageState: state });
    const p = await nojs.newPage();
    for (const [path, name] of [['/activity', 'list'], [`/activity/${callIds[1]}`, 'detail'], ['/activity?status=error&days=30', 'filtered']]) {
      await p.goto(`${f.d.url}${path}`);
      await p.locator('main h1').first().waitFor({ timeout: 5000 });
      if (name === 'detail') expect(await p.locator('#d-status').innerText()).toContain('200');
      else expect(await p.locator('#calls tbody tr').count()).toBeGreaterThan(0);
      expect(await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth), path).toBeLessThanOrEqual(1);
      await p.screenshot({ path: artifact(`activity-${name}-phone.png`), fullPage: true });
    }
    await nojs.close();
    expect(messages.filter((m) => /Content.Security.Policy|Refused to/i.test(m))).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
