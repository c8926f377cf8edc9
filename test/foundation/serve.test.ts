import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, spawnServe } from '../helpers/cli.js';
import { SCHEMA_VERSION } from '../../src/daemon/store/migrations/index.js';

/**
 * Issue #2 point 10 with `agw serve` as a real subprocess: the listening line for --port 0
 * (and the --json event), the --demo quick start, structured logs that never contain a
 * secret, graceful shutdown with a request in flight, and a store it must refuse.
 */
const dirs: string[] = [];
function dataDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'agw-serve-'));
  dirs.push(d);
  return d;
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function userWithKey(data: string, email: string, password = 'pw-0123456789'): Promise<string> {
  const u = await runCli(['admin', 'user', 'create', '--email', email, '--password', password, '--data', data, '--json']);
  expect(u.code, u.stderr).toBe(0);
  const k = await runCli(['admin', 'key', 'create', email, '--data', data, '--json']);
  expect(k.code, k.stderr).toBe(0);
  return JSON.parse(k.stdout).key;
}

describe('agw serve', () => {
  it('--port 0 picks a free port and prints `agw listening on http://HOST:PORT`; SIGTERM exits 0', async () => {
    const s = await spawnServe(['--data', dataDir()]);
    expect(s.stdout()).toMatch(/^agw listening on http:\/\/127\.0\.0\.1:(\d+)\n$/);
    expect(Number(new URL(s.url).port)).toBeGreaterThan(0);
    const res = await fetch(`${s.url}/api/healthz`);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(await s.kill('SIGTERM')).toBe(0);
  });

  it('--json prints the listening event as one JSON line and nothing else', async () => {
    const s = await spawnServe(['--data', dataDir(), '--json']);
    const lines = s.stdout().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({ event: 'listening', url: s.url });
    expect(await s.kill('SIGINT')).toBe(0);
  });

  it("the 'listening' log line says how the store's files are reached: mapped by the native helper, or with system calls (AGW_MMAP=off)", async () => {
    for (const [env, walIndexHeader, bookingJournal] of [[undefined, 'mapped', 'mapped'], ['off', 'read', 'written']] as const) {
      const s = await spawnServe(['--data', dataDir(), '--json'], { AGW_MMAP: env, AGW_LOG_LEVEL: 'info' });
      expect(await s.kill('SIGTERM')).toBe(0);
      const listening = s.stderr().trimEnd().split('\n').map((l) => JSON.parse(l) as { msg?: string; files?: unknown }).find((l) => l.msg === 'listening');
      // npm install builds the helper (native/README.md): without it the first way fails on purpose
      expect(listening?.files, `AGW_MMAP=${env ?? '(unset)'}`).toEqual({ walIndexHeader, bookingJournal });
    }
  });

  it('--demo (the README quick start) seeds a user whose printed key works', async () => {
    const s = await spawnServe(['--data', dataDir(), '--demo', '--json']);
    for (let i = 0; i < 50 && !s.stdout().includes('"event":"demo"'); i++) await delay(100);
    const demo = JSON.parse(s.stdout().split('\n').find((l) => l.includes('"event":"demo"'))!);
    expect(demo.key).toMatch(/^agw_/);
    const res = await fetch(`${s.url}/api/wallet`, { headers: { authorization: `Bearer ${demo.key}` } });
    expect(res.status).toBe(200);
    expect((await res.json()).balance).toBe(10);
    // --demo turns self top-up on
    const topup = await fetch(`${s.url}/api/wallet/topup`, {
      method: 'POST',
      headers: { authorization: `Bearer ${demo.key}`, 'content-type': 'application/json' },
      body: '{"amount":2}',
    });
    expect(topup.status).toBe(200);
    expect((await topup.json()).balance).toBe(12);
    expect(await s.kill('SIGTERM')).toBe(0);
  });
});

describe('logs', () => {
  it('are structured JSON on stderr and never contain a key, password, master token, provider key or cookie', async () => {
    const data = dataDir();
    const master = 'agw_master_LOGSECRET_0123456789';
    const providerKey = 'sk-PROVIDERSECRET-42';
    writeFileSync(join(data, 'agw.yaml'), `auth: { masterToken: ${master} }\nproviders:\n  openai: { apiKey: ${providerKey} }\n`);
    const s = await spawnServe(['--data', data], { AGW_LOG_LEVEL: 'debug' });
    const password = 'pw-LOGSECRET-777';
    const key = await userWithKey(data, 'logs@example.com', password);
    const cookie = 'COOKIESECRET-0123456789';
    const api = `${s.url}/api`;
    await fetch(`${api}/wallet`, { headers: { authorization: `Bearer ${key}` } });
    await fetch(`${api}/wallet`, { headers: { 'x-api-key': key, cookie: `service_session=${cookie}` } });
    await fetch(`${api}/healthz`, { headers: { authorization: `Bearer ${master}` } });
    await fetch(`${api}/portal/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'logs@example.com', password }) });
    await fetch(`${api}/wallet/topup`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"amount":' });
    expect(await s.kill('SIGTERM')).toBe(0);

    const err = s.stderr();
    // the key's secret part: everything after agw_<lookup>_ (a base64url secret may itself hold "_",
    // so split('_')[2] was sometimes a fragment, or empty, which every text contains)
    const keySecret = key.slice(key.indexOf('_', 'agw_'.length) + 1);
    expect(keySecret.length).toBeGreaterThan(16);
    for (const secret of [key, keySecret, password, master, providerKey, cookie]) expect(err).not.toContain(secret);
    const lines = err.trimEnd().split('\n').map((l) => JSON.parse(l));
    // debug request lines carry the headers, with the credentials redacted
    const incoming = lines.filter((l) => l.msg === 'incoming request');
    expect(incoming.length).toBeGreaterThanOrEqual(5);
    expect(incoming.some((l) => l.req.headers.authorization === '[redacted]')).toBe(true);
    expect(incoming.some((l) => l.req.headers.cookie === '[redacted]' && l.req.headers['x-api-key'] === '[redacted]')).toBe(true);
    expect(lines.some((l) => l.msg === 'listening')).toBe(true);
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM: stops accepting, finishes the request in flight, closes the store cleanly, exits 0', async () => {
    const data = dataDir();
    writeFileSync(join(data, 'agw.yaml'), 'wallet: { selfTopup: true }\n');
    const s = await spawnServe(['--data', data]);
    const key = await userWithKey(data, 'inflight@example.com');
    const body = JSON.stringify({ amount: 7 });
    const url = new URL(`${s.url}/api/wallet/topup`);
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      });
      req.on('response', (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.on('error', reject);
      req.write(body.slice(0, 4)); // headers and part of the body: the request is in flight
      (async () => {
        await delay(300);
        exited = s.kill('SIGTERM');
        await delay(700);
        // no longer accepting new connections, while the old one is still served
        refused = await fetch(`${s.url}/api/healthz`).then(
          () => false,
          () => true,
        );
        req.end(body.slice(4));
      })().catch(reject);
    });
    let exited: Promise<number | null> | undefined;
    let refused: boolean | undefined;
    const res = await answer;
    const answeredAt = Date.now();
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body).balance).toBe(7);
    expect(refused).toBe(true);
    expect(await exited).toBe(0);
    // it exits as soon as the last request is answered, not at the 10 s force-close bound
    expect(Date.now() - answeredAt).toBeLessThan(5_000);

    // the store was closed cleanly: WAL checkpointed away, integrity intact, the top-up committed
    const wal = join(data, 'agw.db-wal');
    expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);
    const db = new Database(join(data, 'agw.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.prepare('SELECT w.balance_nusd AS b FROM wallets w JOIN users u ON u.id = w.user_id WHERE u.email = ?').get('inflight@example.com')).toEqual({
        b: 7_000_000_000,
      });
    } finally {
      db.close();
    }
  });
});

describe('a store it must refuse', () => {
  it('a schema newer than this agw: serve exits 1 with SCHEMA_TOO_NEW and a clear message', async () => {
    const data = dataDir();
    const db = new Database(join(data, 'agw.db'));
    db.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(SCHEMA_VERSION + 5, 'future', Date.now());
    db.close();
    const r = await runCli(['serve', '--port', '0', '--data', data]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error SCHEMA_TOO_NEW: the store's schema is version \d+ but this agw only knows up to \d+/);
    expect(r.stderr).toMatch(/hint: .*upgrade agw/);
  });

  it('migrations run by several processes at once apply each version exactly once', async () => {
    const data = dataDir();
    const runs = await Promise.all([1, 2, 3].map(() => runCli(['admin', 'migrate', '--data', data, '--json'])));
    const applied = runs.flatMap((r) => {
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout).applied as number[];
    });
    const db = new Database(join(data, 'agw.db'), { readonly: true });
    const versions = db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[];
    db.close();
    expect(applied.sort((a, b) => a - b)).toEqual(versions.map((v) => v.version));
    expect(versions.at(-1)!.version).toBe(SCHEMA_VERSION);
  });
});
