import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { artifact, openDesktopPage } from '../helpers/chromium.js';
import { json, publishJson } from '../api/skills-helpers.js';

/**
 * Issue #33 in headless Chromium: the skill page as npmjs.com's package page (author page,
 * files, size, tools, weekly installs, links, prereleases, notes as Markdown), one version
 * archived and made current from /creator without JavaScript, and on the dashboard the key
 * form's default budget period, a project made from the Projects card, the favicon.
 */
const SKILL_MD = [
  '---',
  'name: trip-weather',
  'description: Forecasts the weather for a trip.',
  'metadata:',
  '  homepage: https://example.com/trip-weather',
  '  repository: https://github.com/example/trip-weather',
  '---',
  '# trip-weather',
  '',
  'Ask for a city.',
].join('\n');
const tool = (name: string, description: string) => JSON.stringify({ name, description, parameters: { type: 'object', properties: {} } });
const FILES = [
  { path: 'SKILL.md', content: SKILL_MD },
  { path: 'scripts/run.sh', content: 'echo hi\n' },
  { path: 'tools/forecast.json', content: tool('get_forecast', 'The forecast for a city and a day.') },
];

describe('issue #33 pages in headless Chromium', () => {
  let td: TestDaemon;
  let owner: TestUser;
  let browser: Browser;
  let js: BrowserContext;
  let page: Page;
  let id: number;
  const foreign: string[] = [];

  beforeAll(async () => {
    td = await startTestDaemon();
    owner = await td.user({ email: 'grace@example.com' });
    for (const [version, notes] of [['1.0.0', 'First.'], ['1.1.0', '### Added\n- **Hourly** forecasts'], ['1.2.0-beta.1', 'A beta.']]) {
      const res = await publishJson(td, owner.key, { version, category: 'productivity', notes }, FILES);
      expect(res.status).toBe(200);
      id = (await json(res)).id;
    }
    for (let i = 0; i < 2; i++) expect((await td.fetch(`/skills/${id}/install`, { method: 'POST', key: (await td.user()).key })).status).toBe(200);
    ({ browser, context: js, page } = await openDesktopPage(td.url, foreign));
  });
  afterAll(async () => {
    await browser?.close();
    await td?.close();
  });

  test('the skill page: weekly installs, links, what the version contains, the prerelease marked, notes as Markdown', async () => {
    await page.goto(`${td.url}/skills/trip-weather`);
    await page.getByRole('heading', { name: 'trip-weather', level: 1 }).waitFor();
    expect(await page.locator('#skill-weekly').innerText()).toBe('2');
    expect(await page.locator('#skill-homepage').getAttribute('rel')).toBe('nofollow ugc noopener noreferrer');
    expect(await page.locator('#skill-repository').innerText()).toBe('github.com/example/trip-weather');
    await expect(page.locator('#skill-size').innerText()).resolves.toMatch(/^3 files, \d+ B unpacked$/);
    await expect(page.locator('#skill-tools').innerText()).resolves.toBe('get_forecast The forecast for a city and a day.');
    await page.getByText('Files', { exact: true }).click();
    expect(await page.locator('#skill-files tbody tr').allInnerTexts()).toEqual(['SKILL.md\t' + `${Buffer.byteLength(SKILL_MD)} B`, 'scripts/run.sh\t8 B', expect.stringMatching(/^tools\/forecast\.json\t\d+ B$/)]);
    const beta = page.locator('li[data-version="1.2.0-beta.1"] h3');
    await expect(beta.innerText()).resolves.toBe('1.2.0-beta.1 prerelease');
    await expect(page.locator('li[data-version="1.1.0"] h3').innerText()).resolves.toBe('1.1.0 current');
    await page.getByRole('heading', { name: 'Added', level: 4 }).waitFor();
    expect(await page.locator('li[data-version="1.1.0"] .release-notes li strong').innerText()).toBe('Hourly');
    await page.screenshot({ path: artifact('npm-skill.png'), fullPage: true });
  });

  test('the author’s name leads to their public page, which lists their skills', async () => {
    await Promise.all([page.waitForURL(`${td.url}/creators/${owner.id}`), page.locator('#skill-author').click()]);
    await page.getByRole('heading', { name: 'grace', level: 1 }).waitFor();
    expect(await page.locator('#skill-list li.skill').evaluateAll((els) => els.map((e) => e.getAttribute('data-slug')))).toEqual(['trip-weather']);
    await page.screenshot({ path: artifact('npm-creator-public.png'), fullPage: true });
  });

  test('/creator without JavaScript: archive one version, make the beta current, hand it back', async () => {
    const nojs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    try {
      const p = await nojs.newPage();
      await p.goto(`${td.url}/creator`);
      await p.getByLabel('Email').fill(owner.email);
      await p.getByLabel('Password').fill(owner.password);
      await Promise.all([p.waitForURL(`${td.url}/creator`), p.getByRole('button', { name: 'Sign in' }).click()]);
      const row = (v: string) => p.locator(`#skill-${id} tr[data-version="${v}"]`);
      await expect(row('1.2.0-beta.1').locator('td').first().innerText()).resolves.toBe('1.2.0-beta.1 prerelease');
      await Promise.all([p.waitForURL(/\/creator#skill-/), p.getByRole('button', { name: 'Archive version 1.1.0 of trip-weather' }).click()]);
      await expect(row('1.1.0').locator('.status').innerText()).resolves.toBe('archived');
      await expect(row('1.0.0').locator('td').first().innerText()).resolves.toBe('1.0.0 current');
      await Promise.all([p.waitForURL(/\/creator#skill-/), p.getByRole('button', { name: 'Make version 1.2.0-beta.1 of trip-weather current' }).click()]);
      await expect(row('1.2.0-beta.1').locator('td').first().innerText()).resolves.toBe('1.2.0-beta.1 prerelease current');
      await p.screenshot({ path: artifact('npm-creator-versions.png'), fullPage: true });
      await Promise.all([p.waitForURL(/\/creator#skill-/), p.getByRole('button', { name: 'Let the highest release of trip-weather be current' }).click()]);
      await expect(row('1.0.0').locator('td').first().innerText()).resolves.toBe('1.0.0 current');
      expect((await json(await td.fetch(`/skills/${id}`))).currentVersion).toBe('1.0.0');
    } finally {
      await nojs.close();
    }
  });

  test('the dashboard: a key’s budget is per total unless changed, a project from the Projects card, the favicon', async () => {
    await page.goto(`${td.url}/`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await Promise.all([page.waitForURL(`${td.url}/`), page.getByLabel('Password').press('Enter')]);
    await page.getByRole('heading', { name: 'Dashboard', level: 1 }).waitFor();

    await page.getByLabel('New key name').fill('capped');
    await page.getByText('Limits (optional)').click();
    expect(await page.locator('#new-period').inputValue()).toBe('total');
    await page.locator('#new-budget').fill('5');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key:not([hidden])').waitFor();
    const keys = await page.evaluate(() => fetch('/api/keys', { credentials: 'same-origin' }).then((r) => r.json()));
    expect(keys.items.find((k: { name: string }) => k.name === 'capped').limits).toMatchObject({ budget: 5, budgetPeriod: 'total' });

    await page.getByLabel('New project name').fill('Game');
    await Promise.all([page.waitForURL(`${td.url}/#projects`), page.getByRole('button', { name: 'Create project' }).click()]);
    await page.locator('#projects-rows tr', { hasText: 'Game' }).waitFor();
    await expect(page.locator('#projects-rows tr', { hasText: 'Game' }).innerText()).resolves.toMatch(/^Game\tprj_\w+\towner\tSpend$/);

    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    const fetched = await page.evaluate((u) => fetch(u!).then((r) => [r.status, r.headers.get('content-type')]), icon);
    expect(fetched).toEqual([200, 'image/svg+xml']);
    await page.screenshot({ path: artifact('npm-dashboard-projects.png'), fullPage: true });
  });

  test('the new pages fit a phone and load nothing from elsewhere', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    for (const path of ['/skills/trip-weather', `/creators/${owner.id}`, '/creator']) {
      await page.goto(`${td.url}${path}`);
      await page.locator('main h1').first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(1);
    }
    await page.screenshot({ path: artifact('npm-creator-phone.png'), fullPage: true });
    expect(foreign).toEqual([]);
  });
});
