import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { artifact, launchChromium } from '../helpers/chromium.js';
import { json, publishJson, skillMd } from '../api/skills-helpers.js';

/**
 * The skill page shows the scan's warnings for the current version, with their rule, file and
 * line (invisible characters shown as <U+XXXX>, never as markup), the version's digest and
 * signing key; a skill without findings says so. Headless Chromium, with and without script.
 */
describe('the skill page shows what the scan found', () => {
  let td: TestDaemon;
  let owner: TestUser;
  let browser: Browser;
  let page: Page;
  let warnedId: number;

  beforeAll(async () => {
    td = await startTestDaemon();
    owner = await td.user();
    const warned = [
      { path: 'SKILL.md', content: skillMd('scan-warned', 'Formats tables for reports.', '# Tables\n\nAlign the columns.\n') },
      { path: 'references/NOTES.md', content: '# Notes\n\nUse <b>bold</b> and the hidden r\u200Bm here.\n' },
      { path: 'assets/template.zip', content: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0]) },
    ];
    const res = await publishJson(td, owner.key, { version: '1.2.0', notes: 'Adds a template.' }, warned);
    expect(res.status).toBe(200);
    warnedId = (await json(res)).id;
    expect((await publishJson(td, owner.key, { version: '1.0.0' }, [{ path: 'SKILL.md', content: skillMd('scan-clean') }])).status).toBe(200);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  });
  afterAll(async () => {
    await browser?.close();
    await td?.close();
  });

  test('the warnings of the current version, each with its rule, file and line, and the digest the API serves', async () => {
    await page.goto(`${td.url}/skills/scan-warned`);
    const card = page.locator('#trust');
    await card.getByRole('heading', { name: 'Scan and signature' }).waitFor();
    await expect(page.locator('#scan-summary').innerText()).resolves.toBe(
      'The scan reported 2 warnings for version 1.2.0. Read them before you install; agw skill install asks too.',
    );
    const items = page.locator('#scan-findings li');
    expect(await items.count()).toBe(2);
    const texts = await items.allInnerTexts();
    expect(texts[0]).toMatch(/warning\s+ARCHIVE_FILE\s+assets\/template\.zip\s+an archive whose contents are not scanned: the file is a zip archive/);
    expect(texts[1]).toMatch(/warning\s+ZERO_WIDTH\s+references\/NOTES\.md:3\s+/);
    expect(texts[1]).toContain('r<U+200B>m');
    expect(texts[1]).toContain('<b>bold</b>'); // shown as text, not markup
    expect(await page.locator('#scan-findings b').count()).toBe(0);
    const api = await json(await td.fetch(`/skills/${warnedId}/versions/1.2.0/scan`));
    await expect(page.locator('#skill-digest').innerText()).resolves.toBe(api.digest);
    await expect(card.innerText()).resolves.toContain(api.signature.kid);
    await expect(card.innerText()).resolves.toContain('agw skill verify scan-warned');
    await page.screenshot({ path: artifact('skill-scan-warnings.png'), fullPage: true });
  });

  test('without JavaScript too, and a skill without findings says the scan reported nothing', async () => {
    const ctx = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 800 } });
    const p = await ctx.newPage();
    await p.goto(`${td.url}/skills/scan-warned`);
    expect(await p.locator('#scan-findings li').count()).toBe(2);
    await p.goto(`${td.url}/skills/scan-clean`);
    await expect(p.locator('#scan-summary').innerText()).resolves.toBe('The scan reported nothing for version 1.0.0.');
    expect(await p.locator('#scan-findings').count()).toBe(0);
    expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    await p.screenshot({ path: artifact('skill-scan-clean-phone.png'), fullPage: true });
    await ctx.close();
  });
});
