import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { AGW_BIN, spawnServe } from '../helpers/cli.js';

/**
 * Issue #33 item 16: `agw serve --demo` after a restart shows the wallet as it is, keeps
 * one "demo" key, prints its banner before any log line on a terminal, and its simulated
 * upstreams answer a model they do not have with 404, as the providers do.
 */
const data = mkdtempSync(join(tmpdir(), 'agw-demo-'));
afterAll(() => rmSync(data, { recursive: true, force: true }));
const env = { AGW_CONFIG: undefined, AGW_STORE: undefined, AGW_PROVIDER_OPENAI_KEY: undefined, AGW_PROVIDER_ANTHROPIC_KEY: undefined };

async function demo(args: string[] = ['--json']) {
  const s = await spawnServe(['--data', data, '--demo', ...args], env);
  for (let i = 0; i < 50 && !/"event":"demo"|API key/.test(s.stdout()); i++) await delay(100);
  return s;
}
const event = (out: string) => JSON.parse(out.split('\n').find((l) => l.includes('"event":"demo"'))!) as { key: string; balance: number };
const call = (url: string, key: string, path: string, body?: unknown) =>
  fetch(`${url}/api${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: body ? JSON.stringify(body) : undefined,
  });

describe('agw serve --demo', () => {
  let key = '';

  it('a typo\'d model is answered 404 by the simulated provider, as the provider would, and costs nothing', async () => {
    const s = await demo();
    try {
      key = event(s.stdout()).key;
      const before = (await (await call(s.url, key, '/wallet')).json()).balance;
      const typo = await call(s.url, key, '/external/openai/v1/chat/completions', { model: 'gpt-4o-mni', messages: [{ role: 'user', content: 'hi' }] });
      expect(typo.status).toBe(404);
      expect((await typo.json()).error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error' });
      const anthropic = await call(s.url, key, '/external/anthropic/v1/messages', { model: 'claude-nope', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
      expect(anthropic.status).toBe(404);
      expect((await anthropic.json()).error.type).toBe('not_found_error');
      expect((await (await call(s.url, key, '/wallet')).json()).balance).toBe(before);
      // a model the catalog has is served
      const ok = await call(s.url, key, '/external/openai/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
      expect(ok.status).toBe(200);
      expect((await call(s.url, key, '/wallet/topup', { amount: 6.6 })).status).toBe(200);
    } finally {
      await s.kill();
    }
  });

  it('after a restart: the real balance in the banner and the event, the same key, one "demo" key', async () => {
    const s = await demo();
    let balance: number;
    try {
      const e = event(s.stdout());
      expect(e.key).toBe(key);
      balance = (await (await call(s.url, key, '/wallet')).json()).balance;
      expect(balance).toBeGreaterThan(16);
      expect(balance).toBeLessThanOrEqual(16.6); // the call may have been paid from the monthly allowance
      expect(e.balance).toBe(balance);
      const keys = (await (await call(s.url, key, '/keys')).json()).items as { name: string; revoked: boolean }[];
      expect(keys.filter((k) => k.name === 'demo' && !k.revoked)).toHaveLength(1);
    } finally {
      await s.kill();
    }
    const human = await demo([]);
    try {
      const money = `$${balance!.toFixed(2)}`;
      expect(human.stdout()).toContain(`demo user with ${money} in the wallet`);
      expect(human.stdout()).not.toContain('$10 in the wallet');
    } finally {
      await human.kill();
    }
  });

  // a terminal for both stdout and stderr, as a person runs it (util-linux `script` gives the pseudo-terminal)
  it.skipIf(!existsSync('/usr/bin/script'))('on a terminal, the listening line and the banner come before any log line', async () => {
    const cmd = `${process.execPath} ${AGW_BIN} serve --demo --port 0 --data ${data}`;
    const child = spawn('/usr/bin/script', ['-qfec', cmd, '/dev/null'], { env: { ...process.env, ...env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    const closed = new Promise((r) => child.on('close', r));
    try {
      for (let i = 0; i < 100 && !(out.includes('"level"') && out.includes('API key')); i++) await delay(100);
      const lines = out.split(/\r?\n/).filter((l) => l.trim());
      const firstLog = lines.findIndex((l) => l.includes('"level"'));
      const banner = lines.findIndex((l) => l.includes('API key'));
      expect(lines[0]).toMatch(/^agw listening on http/);
      expect(banner).toBeGreaterThan(0);
      expect(firstLog === -1 || firstLog > banner).toBe(true);
    } finally {
      child.kill('SIGTERM');
      await closed;
    }
  });
});
