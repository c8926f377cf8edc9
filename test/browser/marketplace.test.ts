import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { artifact, openDesktopPage } from '../helpers/chromium.js';
import { json, publishJson, skillMd } from '../api/skills-helpers.js';

/**
 * The marketplace pages in headless Chromium: inert READMEs, search without JavaScript,
 * the creator's figures against the API, the HTML 404, phone widths. Screenshots go to
 * test-artifacts/.
 */
const HOSTILE_README = [
  '# Read me',
  '',
  '<script>window.__pwned = "script"</script>',
  '',
  '<img src="/nope.png" onerror="window.__pwned = \'img\'">',
  '',
  '[click](javascript:window.__pwned=\'link\') and <a href="#" onclick="window.__pwned=\'a\'">a link</a>',
  '',
  '```bash',
  'agw skill install web-alpha',
  '```',
].join('\n');

describe('marketplace pages in headless Chromium', () => {
  let td: TestDaemon;
  let owner: TestUser;
  let browser: Browser;
  let js: BrowserContext;
  let page: Page;
  const foreign: string[] = [];
  const ids: Record<string, number> = {};

  async function publish(slug: string, fields: Record<string, string | number>, readme?: string) {
    const files = [{ path: 'SKILL.md', content: skillMd(slug, `The ${slug} skill, for long dialogue trees and more.`, `# ${slug}\n\nUse **${slug}** well.\n`) }];
    if (readme) files.push({ path: 'README.md', content: readme });
    const res = await publishJson(td, owner.key, { version: '1.0.0', category: 'scene', ...fields }, files);
    expect(res.status).toBe(200);
    ids[slug] = (await json(res)).id;
  }

  beforeAll(async () => {
    td = await startTestDaemon();
    owner = await td.user();
    await publish('web-alpha', { name: 'Web Alpha', price: 2.5, category: 'npc-dialogue', notes: 'First release.' }, HOSTILE_README);
    await publish('web-beta', { name: 'Web Beta', category: 'story-terrain' });
    await publish('web-gamma', { name: 'Web Gamma with a rather long name that has to wrap on a phone' });
    for (const [slug, n] of [['web-alpha', 3], ['web-gamma', 1]] as const) {
      for (let i = 0; i < n; i++) {
        const fan = await td.user({ balance: 10 });
        expect((await td.fetch(`/skills/${ids[slug]}/install`, { method: 'POST', key: fan.key })).status).toBe(200);
      }
    }
    ({ browser, context: js, page } = await openDesktopPage(td.url, foreign));
  });
  afterAll(async () => {
    await browser?.close();
    await td?.close();
  });

  test('a README with <script>, <img onerror> and javascript: links is rendered inert, as text', async () => {
    await page.goto(`${td.url}/skills/web-alpha`);
    await page.getByRole('heading', { name: 'Web Alpha', level: 1 }).waitFor();
    const readme = page.locator('#readme .md');
    await expect(readme.innerText()).resolves.toContain('<script>window.__pwned = "script"</script>');
    await expect(readme.innerText()).resolves.toContain('<img src="/nope.png"');
    expect(await page.locator('main script, main img, main [onerror], main [onclick]').count()).toBe(0);
    expect(await page.locator('#readme a').count()).toBe(0);
    await page.getByText('[click](javascript').click();
    await page.waitForTimeout(100);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    await expect(page.locator('#skill-md').innerText()).resolves.toContain('Use web-alpha well.');
    expect(Number(await page.locator('#skill-installs data').getAttribute('value'))).toBe(3);
    expect(await page.locator('#skill-price').innerText()).toBe('$2.50');
    await expect(page.locator('#versions').innerText()).resolves.toContain('First release.');
    await page.screenshot({ path: artifact('marketplace-skill.png'), fullPage: true });
  });

  test('the install line’s copy button appears with JavaScript and copies the command', async () => {
    await js.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: td.url });
    const copy = page.locator('button[data-copy="install-cmd"]');
    await copy.click();
    await page.waitForFunction(() => document.getElementById('copy-status')?.textContent === 'Copied to the clipboard.');
    await expect(copy.innerText()).resolves.toBe('Copied');
    const text = await page.evaluate(() => navigator.clipboard.readText());
    expect(text).toBe('agw skill install web-alpha');
  });

  test('search, category and paging work without JavaScript (a plain GET form)', async () => {
    const nojs = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    try {
      const p = await nojs.newPage();
      await p.goto(`${td.url}/skills`);
      const cards = p.locator('#skill-list li.skill');
      expect(await cards.count()).toBe(3);
      await p.getByLabel('Search').fill('alpha');
      await Promise.all([p.waitForURL(/\/skills\?q=alpha/), p.getByLabel('Search').press('Enter')]);
      expect(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-slug')))).toEqual(['web-alpha']);
      await p.getByLabel('Search').fill('');
      await p.getByLabel('Category').selectOption('story-terrain');
      await Promise.all([p.waitForURL(/category=story-terrain/), p.getByRole('button', { name: 'Search' }).click()]);
      expect(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-slug')))).toEqual(['web-beta']);
      await p.getByLabel('Category').selectOption('');
      await p.getByLabel('Sort by').selectOption('name');
      await Promise.all([p.waitForURL(/sort=name/), p.getByRole('button', { name: 'Search' }).click()]);
      expect(await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-slug')))).toEqual(['web-alpha', 'web-beta', 'web-gamma']);
      await p.screenshot({ path: artifact('marketplace-search-nojs.png'), fullPage: true });
      await p.getByRole('link', { name: 'Web Alpha' }).click();
      await p.getByRole('heading', { name: 'Web Alpha', level: 1 }).waitFor();
      expect(await p.getByRole('button', { name: 'Copy' }).count()).toBe(0); // hidden until the script shows it
      await expect(p.locator('#install-cmd').innerText()).resolves.toBe('agw skill install web-alpha');
    } finally {
      await nojs.close();
    }
  });

  test('/creator sends a signed-out visitor to sign in and back; its install counts equal GET /api/skills/mine', async () => {
    await page.goto(`${td.url}/creator`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await Promise.all([page.waitForURL(`${td.url}/creator`), page.getByRole('button', { name: 'Sign in' }).click()]);
    await page.getByRole('heading', { name: 'Creator', level: 1 }).waitFor();
    const mine = await page.evaluate(() => fetch('/api/skills/mine', { credentials: 'same-origin' }).then((r) => r.json()));
    expect(mine.items.length).toBe(3);
    for (const s of mine.items as { id: number; installs: number; installCount: number; revenue: number }[]) {
      const card = page.locator(`#skill-${s.id}`);
      expect(Number(await card.locator('.installs data').getAttribute('value'))).toBe(s.installs);
      expect(Number(await card.locator('.revenue data').getAttribute('value'))).toBe(s.revenue);
    }
    expect(Number(await page.locator('#total-installs data').getAttribute('value'))).toBe(4);
    const bars = await page.locator('#installs-chart rect.b').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
    expect(bars.length).toBe(30);
    expect(bars[29]).toBe(4); // every install happened today
    await page.screenshot({ path: artifact('marketplace-creator.png'), fullPage: true });
  });

  test('archive and publish from /creator with its buttons', async () => {
    await Promise.all([page.waitForURL(/\/creator#skill-/), page.getByRole('button', { name: 'Archive Web Beta' }).click()]);
    await expect(page.locator(`#skill-${ids['web-beta']} h3 .status`).innerText()).resolves.toBe('archived');
    expect((await td.fetch(`/skills/${ids['web-beta']}`)).status).toBe(404);
    await Promise.all([page.waitForURL(/\/creator#skill-/), page.getByRole('button', { name: 'Publish Web Beta' }).click()]);
    await expect(page.locator(`#skill-${ids['web-beta']} h3 .status`).innerText()).resolves.toBe('published');
  });

  test('an unknown path is the HTML 404 page with the site navigation', async () => {
    const r = await page.goto(`${td.url}/no/such/page`);
    expect(r?.status()).toBe(404);
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await page.getByRole('navigation', { name: 'Site' }).getByRole('link', { name: 'Skills' }).waitFor();
    await page.screenshot({ path: artifact('marketplace-404.png') });
  });

  test('every page fits a phone (no horizontal scrolling) and nothing loads from elsewhere', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    for (const [path, name] of [['/skills', 'skills'], ['/skills/web-alpha', 'skill'], ['/creator', 'creator'], ['/', 'dashboard'], ['/nope', '404']]) {
      await page.goto(`${td.url}${path}`);
      await page.locator('main h1').first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(1);
      await page.screenshot({ path: artifact(`marketplace-${name}-phone.png`), fullPage: true });
    }
    expect(foreign).toEqual([]);
  });
});
