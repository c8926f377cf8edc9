import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { runCliTty } from '../cli/tty.js';

/**
 * Issue 14 point 13: `agw admin` silently used another store (a new ~/.agw/agw.db) when
 * --data was forgotten. Now it names the store on a terminal, refuses a data directory
 * without a store (except to create one), and can list users and keys.
 */
let d: TestDaemon;
let ada: TestUser;
beforeAll(async () => {
  d = await startTestDaemon({ yaml: 'gateway: { keyLastUsedFlushMs: 200 }\n' });
  ada = await d.user({ tier: 'pro' });
});
afterAll(() => d.close());

const admin = (args: string[], data = d.dataDir) => runCli(['admin', ...args, '--data', data]);
async function ok<T = any>(args: string[]): Promise<T> {
  const r = await admin([...args, '--json']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toBe(''); // not a terminal: nothing but the one JSON document
  return JSON.parse(r.stdout) as T;
}

describe('agw admin user list / key list', () => {
  it('user list: every user, without password hashes', async () => {
    const out = await ok<{ items: Record<string, unknown>[] }>(['user', 'list']);
    const row = out.items.find((u) => u.id === ada.id)!;
    expect(row).toEqual({ id: ada.id, email: ada.email, name: null, tier: 'pro', createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    expect(JSON.stringify(out)).not.toMatch(/scrypt|password/i);
  });

  it('key list USER: the contract’s Key record, never the secret; lastUsedAt after use; revoked after revoke', async () => {
    expect((await d.fetch('/wallet', { key: ada.key })).status).toBe(200);
    const k2 = await ok<{ id: string; key: string }>(['key', 'create', ada.email, '--name', 'ci']);
    await ok(['key', 'revoke', k2.id]);
    let items: Record<string, unknown>[] = [];
    for (let t = Date.now(); Date.now() - t < 5_000; ) {
      const r = await admin(['key', 'list', ada.email, '--json']);
      items = JSON.parse(r.stdout).items;
      if (items.find((k) => k.id === ada.keyId)?.lastUsedAt) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(items.map((k) => k.id).sort()).toEqual([ada.keyId, k2.id].sort());
    const contract = ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'limits', 'name', 'prefix', 'revoked', 'spent'];
    for (const k of items) {
      expect(Object.keys(k)).toEqual(expect.arrayContaining(contract));
      expect(k).not.toHaveProperty('key');
      expect(k).not.toHaveProperty('hash');
    }
    expect(items.find((k) => k.id === ada.keyId)).toMatchObject({ name: 'test', revoked: false, lastUsedAt: expect.stringMatching(/:00\.000Z$/) });
    expect(items.find((k) => k.id === k2.id)).toMatchObject({ name: 'ci', revoked: true, lastUsedAt: null, prefix: expect.stringMatching(/^agw_[0-9a-f]{12}_…$/) });
    const text = JSON.stringify(items);
    expect(text).not.toContain(ada.key);
    expect(text).not.toContain(k2.key);
    const missing = await admin(['key', 'list', 'nobody@example.com']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('USER_NOT_FOUND');
  });
});

describe('agw admin names the store it acts on', () => {
  it('on a terminal, a first line says which store (a PostgreSQL URL without its password)', async () => {
    const r = await runCliTty(['admin', 'user', 'list', '--data', d.dataDir], { AGW_DATA: undefined, AGW_CONFIG: undefined, AGW_STORE: undefined });
    expect(r.code).toBe(0);
    const first = r.screen.split('\n')[0];
    const store = d.daemon.ctx.config.store;
    if (store.startsWith('postgres')) {
      const u = new URL(store);
      expect(first).toBe(`store: postgres://${u.username ? `${u.username}@` : ''}${u.hostname}:${u.port || '5432'}${u.pathname}`);
      if (u.password) expect(r.screen).not.toContain(u.password);
    } else {
      expect(first).toBe(`store: ${join(d.dataDir, 'agw.db')}`);
    }
    expect(r.screen).toContain(ada.email); // then the table
  });

  it('a data directory without a store is refused (nothing created); user create makes one and says so', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'agw-nostore-'));
    try {
      for (const args of [['key', 'create', 'ada@example.com'], ['user', 'list'], ['org', 'create', '--name', 'Acme', '--tier', 'team']]) {
        const r = await admin(args, empty);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr).toContain(`error STORE_NOT_FOUND: no store at ${join(empty, 'agw.db')}`);
        expect(r.stderr).toContain('hint: name the daemon');
      }
      expect(existsSync(join(empty, 'agw.db'))).toBe(false);
      const created = await runCliTty(['admin', 'user', 'create', '--email', 'first@example.com', '--data', empty], { AGW_STORE: undefined, AGW_CONFIG: undefined });
      expect(created.code).toBe(0);
      expect(created.screen.split('\n')[0]).toBe(`store: ${join(empty, 'agw.db')} (new: created now)`);
      expect(existsSync(join(empty, 'agw.db'))).toBe(true);
      const again = await runCliTty(['admin', 'user', 'list', '--data', empty], { AGW_STORE: undefined, AGW_CONFIG: undefined });
      expect(again.screen.split('\n')[0]).toBe(`store: ${join(empty, 'agw.db')}`);
      expect(again.screen).toContain('first@example.com');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
