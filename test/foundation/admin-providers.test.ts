import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { startKeyUpstream, type KeyUpstream } from '../helpers/key-upstream.js';

/**
 * `agw admin providers --json` (CONTRACT "Several keys per provider"), run as a subprocess
 * of the built CLI against the store of a running daemon: each key's health, cooldown,
 * calls and failures as the daemon counted them, by name; never a secret.
 */
const KA = 'sk-test-admin-alpha-9876543210';
const KB = 'sk-test-admin-bravo-0123456789';
const GROQ = 'gsk-test-admin-groq-55555555';

let up: KeyUpstream;
let d: TestDaemon;
beforeAll(async () => {
  up = await startKeyUpstream([KA, KB]);
  d = await startTestDaemon({
    yaml: `
gateway: { keyStatsFlushMs: 200 }
providers:
  openai:
    baseUrl: ${up.url}
    apiKey: ${KA}
    keys: [ { apiKey: ${KB}, weight: 2 } ]
  groq: { apiKey: ${GROQ} }
`,
  });
});
afterAll(async () => {
  await d?.close();
  await up?.close();
});

describe('agw admin providers', () => {
  it('lists every provider with a key, each key by name with its health, cooldown, calls and failures', async () => {
    const u = await d.user({ tier: 'free', balance: 5 });
    up.set(KA, '429', '120');
    // a conversation marker per call: no pin, so the weights decide the first try
    for (let i = 0; i < 3; i++) {
      const r = await d.fetch('/external/openai/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: `q${i}` }] } });
      expect(r.status).toBe(200);
    }
    const sent = up.counts();
    expect(sent[KA]).toBe(1); // answered 429 once, then cooling for 120 s
    expect(sent[KB]).toBe(3);
    await new Promise((r) => setTimeout(r, 600)); // a flush of the daemon's figures

    const r = await runCli(['admin', 'providers', '--json', '--data', d.dataDir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.items.map((p: { id: string }) => p.id).sort()).toEqual(['groq', 'openai']);
    const openai = out.items.find((p: { id: string }) => p.id === 'openai');
    expect(openai.keys.map((k: { name: string }) => k.name)).toEqual(['default', 'key-1']);
    const [a, b] = openai.keys;
    expect(Object.keys(a).sort()).toEqual(['calls', 'coolingUntil', 'failures', 'healthy', 'name']);
    expect(a).toMatchObject({ name: 'default', healthy: false, calls: 1, failures: 1 });
    const until = Date.parse(a.coolingUntil);
    expect(until).toBeGreaterThan(Date.now() + 100_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 120_000);
    expect(b).toEqual({ name: 'key-1', healthy: true, coolingUntil: null, calls: 3, failures: 0 });
    expect(out.items.find((p: { id: string }) => p.id === 'groq').keys).toEqual([{ name: 'default', healthy: true, coolingUntil: null, calls: 0, failures: 0 }]);
    for (const secret of [KA, KB, GROQ]) expect(r.stdout).not.toContain(secret);

    // without --json: a table, no secret either
    const t = await runCli(['admin', 'providers', '--data', d.dataDir]);
    expect(t.code, t.stderr).toBe(0);
    expect(t.stdout).toMatch(/openai\tdefault\tcooling\t/);
    expect(t.stdout).toMatch(/openai\tkey-1\thealthy\t-\t3\t0/);
    for (const secret of [KA, KB, GROQ]) expect(t.stdout + t.stderr).not.toContain(secret);
  });
});
