import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Headless Chromium for the browser suites: the system's build, no network beyond what a page asks for. */
export const CHROMIUM = process.env.AGW_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Screenshots go here (git-ignored): look at them after a run. */
export const ARTIFACTS = join(process.cwd(), 'test-artifacts');

export function launchChromium(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}

export const artifact = (name: string) => join(ARTIFACTS, name);

/**
 * Chromium with one desktop-sized page (1280 x 900, in a context of its own) on `origin`'s
 * pages; every request the page makes to another origin is pushed onto `foreign`, which a
 * suite expects empty at its end (agw's pages load nothing from elsewhere).
 */
export async function openDesktopPage(origin: string, foreign: string[]): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  const browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  page.on('request', (r) => {
    if (!r.url().startsWith(origin)) foreign.push(r.url());
  });
  return { browser, context, page };
}
