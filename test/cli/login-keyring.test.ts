import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { cliEnv, json, type CliEnv } from './cli-env.js';

/**
 * Issue 14 point 7, on the machine as it is: the OS keyring is NOT disabled here (no
 * AGW_NO_KEYRING), so on headless Linux @napi-rs/keyring falls back to the kernel keyutils
 * session keyring, which accepts a write that no later process can read. A second login
 * used to move the key there and drop it from the file: logged out. A profile name of its
 * own, so a machine with a real keyring is left as it was (logout at the end).
 */
let d: TestDaemon;
let alice: TestUser;
let env: CliEnv;
const profile = `kr-${process.pid}-${Date.now()}`;

beforeAll(async () => {
  d = await startTestDaemon();
  alice = await d.user({ tier: 'free', balance: 1 });
  env = cliEnv({ AGW_NO_KEYRING: undefined, AGW_PROFILE: profile });
});
afterAll(async () => {
  await env?.run(['logout']);
  env?.cleanup();
  await d?.close();
});

describe('a second agw login never logs you out (keyring that does not keep what it accepts)', () => {
  test('login twice, then whoami in a new process works and the credential is still stored', async () => {
    for (let i = 0; i < 2; i++) {
      const r = await env.run(['login', '--with-token', '--base-url', d.url, '--json'], { input: alice.key });
      expect(r.code, r.stderr).toBe(0);
      expect(json<{ store: string }>(r).store).toMatch(/^(file|keyring)$/);
    }
    for (let i = 0; i < 2; i++) {
      const who = await env.run(['whoami', '--json']);
      expect(who.code, who.stderr).toBe(0);
      expect(json(who)).toMatchObject({ profile, kind: 'key', userId: alice.id });
    }
    const list = json<{ profiles: { name: string; credentials: string | null; store: string | null }[] }>(await env.run(['profile', 'list', '--json']));
    expect(list.profiles.find((p) => p.name === profile)).toMatchObject({ credentials: 'key' });
    // where the machine has no keyring that keeps secrets, the file still holds the key
    const stored = list.profiles.find((p) => p.name === profile)!.store;
    if (stored === 'file') {
      const file = join(env.configDir, 'credentials.json');
      expect(existsSync(file)).toBe(true);
      expect(JSON.parse(readFileSync(file, 'utf8')).profiles[profile].apiKey).toBe(alice.key);
    }
  });
});
