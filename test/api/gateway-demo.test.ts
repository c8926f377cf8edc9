import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/shared/config/load.js';
import { startDaemon, type Daemon } from '../../src/daemon/serve.js';

/** `agw serve --demo`: simulated upstreams and a seeded key; every gateway call works offline. */
// the demo runs on the embedded store; the PostgreSQL leg of the matrix has nothing to add here
const onPostgres = process.env.AGW_TEST_STORE === 'postgres';
let daemon: Daemon;
let dataDir: string;
let key: string;
beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'agw-demo-'));
  if (onPostgres) return;
  daemon = await startDaemon({ port: 0, host: '127.0.0.1', dataDir, demo: true, config: loadConfig(undefined, {}), logLevel: 'silent' });
  key = daemon.demo!.seeded!.key;
});
afterAll(async () => {
  await daemon?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe.skipIf(onPostgres)('demo mode', () => {
  it('unified chat, smart route and proxy all answer with the seeded key', async () => {
    const api = `${daemon.url}/api`;
    const chat = await fetch(`${api}/gateway/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'smart-pro', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    expect(chat.status).toBe(200);
    expect(chat.headers.get('x-service-resolved-provider')).toBe('anthropic');

    const smart = new OpenAI({ apiKey: key, baseURL: `${api}/external/smart/v1`, maxRetries: 0 });
    const stream = await smart.chat.completions.create({ model: 'best-cheap-llm', messages: [{ role: 'user', content: 'Hello' }], stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toContain('Echo: Hello');

    const proxy = new OpenAI({ apiKey: key, baseURL: `${api}/external/openai/v1`, maxRetries: 0 });
    const r = await proxy.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
    expect(r.choices[0].message.content).toContain('Echo: Hello');

    const ent = await (await fetch(`${api}/gateway/entitlements`, { headers: { authorization: `Bearer ${key}` } })).json();
    expect(ent.quotas.ai_chat.used).toBe(3);
    expect(ent.wallet.monthlyAllowanceUsed).toBeGreaterThan(0);
  });
});
