import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import pg from 'pg';
import { SCHEMA_VERSION, MIGRATIONS } from '../../src/daemon/store/migrations/index.js';
import { runCli, spawnServe } from '../helpers/cli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/pg.js';

/** `agw admin migrate` and `agw serve` on a PostgreSQL store, through the built CLI (needs npm run build). */
let tdb: TestDatabase;
let dataDir: string;
const env = () => ({ AGW_STORE: tdb.url, AGW_DATA: dataDir, AGW_CONFIG: undefined });

beforeAll(async () => {
  tdb = await createTestDatabase({ migrated: false });
  dataDir = mkdtempSync(join(tmpdir(), 'agw-pgcli-'));
});
afterAll(async () => {
  await tdb?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('agw admin migrate applies every migration once and reports the current version', async () => {
  const first = await runCli(['admin', 'migrate', '--json'], { env: env() });
  expect(first.stderr).toBe('');
  expect(first.code).toBe(0);
  expect(JSON.parse(first.stdout)).toEqual({ applied: MIGRATIONS.map((m) => m.version).sort((a, b) => a - b), current: SCHEMA_VERSION });
  const again = await runCli(['admin', 'migrate', '--json'], { env: env() });
  expect(JSON.parse(again.stdout)).toEqual({ applied: [], current: SCHEMA_VERSION });
});

test('agw serve on PostgreSQL serves, and admin commands act on the same store while it runs', async () => {
  const serve = await spawnServe(['--json'], env());
  try {
    const u = await runCli(['admin', 'user', 'create', '--email', 'ops@example.com', '--json'], { env: env() });
    expect(u.code).toBe(0);
    const k = await runCli(['admin', 'key', 'create', 'OPS@example.com', '--json'], { env: env() });
    const { key, id } = JSON.parse(k.stdout) as { key: string; id: string };
    const wallet = () => fetch(`${serve.url}/api/wallet`, { headers: { authorization: `Bearer ${key}` } });
    expect((await wallet()).status).toBe(200);
    expect((await runCli(['admin', 'key', 'revoke', id, '--json'], { env: env() })).code).toBe(0);
    const after = await wallet();
    expect(after.status).toBe(401); // revoked by another process: refused at once, no cache to expire
  } finally {
    await serve.kill();
  }
});

test('agw serve refuses an unreachable database: exit 1, STORE_UNAVAILABLE, host named, password not', async () => {
  const t0 = Date.now();
  const r = await runCli(['serve', '--port', '0'], {
    env: { ...env(), AGW_STORE: 'postgres://agw:hunter2@127.0.0.1:1/agw?connect_timeout=2' },
  });
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('error STORE_UNAVAILABLE: cannot reach the PostgreSQL store at 127.0.0.1:1/agw');
  expect(r.stderr).not.toContain('hunter2');
  expect(r.stderr).not.toContain('bug');
  expect(Date.now() - t0).toBeLessThan(8000);
});

test('agw serve refuses a schema newer than the code: exit 1, SCHEMA_TOO_NEW', async () => {
  const c = new pg.Client({ connectionString: tdb.url });
  await c.connect();
  await c.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [SCHEMA_VERSION + 1, 'future', Date.now()]);
  await c.end();
  const r = await runCli(['serve', '--port', '0', '--json'], { env: env() });
  expect(r.code).toBe(1);
  expect(JSON.parse(r.stderr)).toMatchObject({ code: 'SCHEMA_TOO_NEW', error: expect.stringContaining(`version ${SCHEMA_VERSION + 1}`) });
  expect(r.stdout).toBe('');
});
