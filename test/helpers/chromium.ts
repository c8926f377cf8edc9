import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';

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
