import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/shared/config/load.js';
import { startDaemon, type Daemon } from '../../src/daemon/serve.js';
import { createUser } from '../../src/daemon/store/users.js';
import { createApiKey } from '../../src/daemon/store/keys.js';
import { credit, setUnlimited } from '../../src/daemon/money/wallets.js';
import { setQuotaOverride } from '../../src/daemon/store/quota-overrides.js';
import { hashPassword } from '../../src/daemon/auth/password.js';
import { usdToNano } from '../../src/shared/money.js';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { createTestDatabase, usePostgres, type TestDatabase } from './pg.js';

export interface TestUser {
  id: string;
  email: string;
  key: string;
  keyId: string;
  password: string;
}

export interface TestDaemon {
  daemon: Daemon;
  /** http://127.0.0.1:PORT */
  url: string;
  /** http://127.0.0.1:PORT/api */
  api: string;
  dataDir: string;
  configFile: string;
  user(opts?: { tier?: string; balance?: number; unlimited?: boolean; quotas?: Record<string, number>; email?: string }): Promise<TestUser>;
  /** fetch against the API with an optional bearer key */
  fetch(path: string, init?: RequestInit & { key?: string; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

let counter = 0;

/** The config text with `store:` set (left as it is when it is not a YAML mapping). */
function withStore(yaml: string, store: string): string {
  let doc: unknown;
  try {
    doc = parseYaml(yaml);
  } catch {
    return yaml;
  }
  if (doc !== null && (typeof doc !== 'object' || Array.isArray(doc))) return yaml;
  return stringifyYaml({ ...(doc as Record<string, unknown> | null), store });
}

/**
 * A real daemon on an ephemeral loopback port with a fresh data directory. `yaml` is
 * the config file's text; `env` adds environment overrides (e.g. provider base URLs).
 * The store is SQLite, or with AGW_TEST_STORE=postgres (the test matrix) a fresh
 * PostgreSQL database dropped on close. `store` shares a given store URL instead
 * (several daemons on one database); the caller then owns that database.
 */
export async function startTestDaemon(
  opts: { yaml?: string; env?: Record<string, string>; store?: string } = {},
): Promise<TestDaemon> {
  const dataDir = mkdtempSync(join(tmpdir(), 'agw-test-'));
  const configFile = join(dataDir, 'agw.yaml');
  let pgDb: TestDatabase | undefined;
  let store = opts.store ?? opts.env?.AGW_STORE;
  // a small pool per test daemon: parallel test files share one server (max_connections 100)
  if (!store && usePostgres) store = `${(pgDb = await createTestDatabase()).url}?pool_max=5`;
  // The store goes into the config file too, so `agw admin --data DIR` reaches the same one.
  writeFileSync(configFile, store ? withStore(opts.yaml ?? '{}', store) : (opts.yaml ?? '{}\n'));
  const config = loadConfig(configFile, { ...opts.env, ...(store ? { AGW_STORE: store } : {}) });
  let daemon: Daemon;
  try {
    daemon = await startDaemon({ port: 0, host: '127.0.0.1', dataDir, config, logLevel: 'silent' });
  } catch (e) {
    await pgDb?.drop();
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  const api = `${daemon.url}/api`;
  const db = daemon.ctx.db;
  return {
    daemon,
    url: daemon.url,
    api,
    dataDir,
    configFile,
    async user(u = {}) {
      const email = u.email ?? `user${++counter}-${process.pid}@example.com`;
      const password = 'correct horse battery staple';
      const passwordHash = await hashPassword(password);
      return db.tx(async (q) => {
        const row = await createUser(q, { email, tier: u.tier ?? 'pro', passwordHash });
        if (u.balance) await credit(q, { userId: row.id, amount: usdToNano(u.balance), type: 'credit', description: 'test' });
        if (u.unlimited) await setUnlimited(q, row.id, true);
        for (const [t, l] of Object.entries(u.quotas ?? {})) await setQuotaOverride(q, row.id, t, l);
        const k = await createApiKey(q, row.id, 'test');
        return { id: row.id, email, key: k.key, keyId: k.id, password };
      });
    },
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.key) headers.set('authorization', `Bearer ${init.key}`);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      return fetch(`${api}${path}`, { ...init, headers, body });
    },
    async close() {
      await daemon.close();
      await pgDb?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
