import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AGW_BIN } from '../helpers/cli.js';
import { usd } from '../../src/cli/format.js';
import type { TestUser } from '../helpers/daemon.js';
import { startGatewayFixture, usageTransactions, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { ANSI, cliEnv, json, type CliEnv } from './cli-env.js';

/**
 * `agw logs` (list, filters, --json, --follow), `agw logs show`, and `agw chat` showing
 * the call's real cost from its record, against a real daemon with simulated upstreams.
 */
let f: GatewayFixture;
let env: CliEnv;
let ada: TestUser;

beforeAll(async () => {
  f = await startGatewayFixture();
  ada = await f.d.user({ tier: 'pro', balance: 20 });
  env = cliEnv({ AGW_BASE_URL: f.d.url });
  const login = await env.run(['login', '--with-token'], { input: ada.key });
  if (login.code !== 0) throw new Error(login.stderr);
  for (const prompt of ['first call', 'second call']) {
    const r = await env.run(['chat', prompt]);
    if (r.code !== 0) throw new Error(r.stderr);
  }
  // a refused one: a model outside the pro tier
  expect((await f.d.fetch('/gateway/chat', { method: 'POST', key: ada.key, json: { model: 'smart-premium', messages: [{ role: 'user', content: 'x' }] } })).status).toBe(403);
});
afterAll(async () => {
  env?.cleanup();
  await f?.close();
});

const api = async (path: string) => (await (await f.d.fetch(path, { key: ada.key })).json()) as any;

describe('agw logs', () => {
  test('--json prints GET /api/requests unchanged; filters and --limit pass through', async () => {
    const all = await env.run(['logs', '--json']);
    expect(all.code).toBe(0);
    expect(all.stderr).toBe('');
    expect(json(all)).toEqual(await api('/requests?limit=20'));
    const errors = json<any>(await env.run(['logs', '--status', 'error', '--json']));
    expect(errors.items.map((x: any) => x.code)).toEqual(['MODEL_NOT_ALLOWED']);
    const one = json<any>(await env.run(['logs', '-n', '1', '--model', 'gpt-4o-mini', '--json']));
    expect(one.items).toHaveLength(1);
    expect(one.nextCursor).toBeTruthy();
    const older = json<any>(await env.run(['logs', '--cursor', one.nextCursor, '--model', 'gpt-4o-mini', '--json']));
    expect(older.items.map((x: any) => x.id)).not.toContain(one.items[0].id);
  });

  test('without a terminal: a tab-separated header and one line per call, newest last, no colour', async () => {
    const r = await env.run(['logs']);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(ANSI);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0].split('\t')).toEqual(['TIME (UTC)', 'ID', 'STATUS', 'MODEL', 'PROVIDER', 'TOKENS', 'COST', 'LATENCY']);
    const items = (await api('/requests?limit=20')).items;
    expect(lines.slice(1).map((l) => l.split('\t')[1])).toEqual([...items].reverse().map((x: any) => x.id));
    expect(lines.at(-1)).toContain('403 MODEL_NOT_ALLOWED');
  });

  test('bad options are usage errors (exit 2) that say what to type', async () => {
    for (const args of [['--status', 'bad'], ['--since', 'yesterday'], ['--limit', '0'], ['--limit', '501'], ['--follow', '--cursor', '1.x'], ['--cursor', 'junk'], ['--since', '2024-13-45']]) {
      const r = await env.run(['logs', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/error: /);
    }
  });

  test('show ID prints one call; --json is GET /api/requests/{id}; an unknown id fails with a hint', async () => {
    const [last] = (await api('/requests?limit=1&status=ok')).items;
    const j = await env.run(['logs', 'show', last.id, '--json']);
    expect(json(j)).toEqual(await api(`/requests/${last.id}`));
    const text = await env.run(['logs', 'show', last.id]);
    expect(text.stdout).toContain(last.id);
    expect(text.stdout).toMatch(new RegExp(`cost\\s+\\${usd(last.cost)}`));
    const nf = await env.run(['logs', 'show', 'use_nope']);
    expect(nf.code).toBe(1);
    expect(nf.stderr).toContain('REQUEST_NOT_FOUND');
  });

  test('--follow --json: the newest calls, then one JSON object per line as each new call settles', async () => {
    const child = spawn(process.execPath, [AGW_BIN, 'logs', '--follow', '--json', '-n', '2'], {
      env: { ...process.env, AGW_CONFIG_DIR: env.configDir, AGW_NO_KEYRING: '1', AGW_BASE_URL: f.d.url, AGW_API_KEY: undefined, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const lines = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const until = async (n: number) => {
      for (let i = 0; i < 200 && lines().length < n; i++) await new Promise((r) => setTimeout(r, 50));
      return lines();
    };
    try {
      const first = await until(2);
      const newest = (await api('/requests?limit=2')).items;
      expect(first.map((x) => x.id)).toEqual([newest[1].id, newest[0].id]);
      const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: ada.key, json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'live' }] } });
      await res.text();
      const after = await until(3);
      expect(after[2]).toEqual(await api(`/requests/${res.headers.get('x-request-id')}`));
      expect(err).toBe('');
    } finally {
      child.kill('SIGTERM');
    }
  });
});

describe('agw chat shows what the call really cost', () => {
  test('--stream --json carries the request id and the cost of its record, the wallet’s debit', async () => {
    const r = await env.run(['chat', 'how much?', '--stream', '--json']);
    expect(r.code).toBe(0);
    const out = json<any>(r);
    const rec = await api(`/requests/${out.requestId}`);
    expect(out.cost).toBe(rec.cost);
    const tx = (await usageTransactions(f.db, ada.id)).find((t) => t.usageId === out.requestId)!;
    expect(out.cost).toBe(-tx.amount / 1e9);
  });

  test('on a terminal the last line names the model, the cost from the record and the request id', async () => {
    // `script` gives the CLI a pseudo-terminal, as a person's shell would (spawned async: the daemon runs in this process)
    const child = spawn('script', ['-qec', `${process.execPath} ${AGW_BIN} chat "on a terminal"`, '/dev/null'], {
      env: { ...process.env, AGW_CONFIG_DIR: env.configDir, AGW_NO_KEYRING: '1', AGW_BASE_URL: f.d.url, AGW_API_KEY: '', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (d) => (stdout += d));
    await new Promise((r) => child.on('close', r));
    const r = { stdout };
    const last = r.stdout.trim().split(/\r?\n/).at(-1)!;
    const m = /openai\/gpt-4o-mini · (\$[0-9.]+) · (use_[0-9a-z]+)/.exec(last);
    expect(m, r.stdout).not.toBeNull();
    const rec = await api(`/requests/${m![2]}`);
    expect(m![1]).toBe(usd(rec.cost)); // the record's cost, as the CLI prints USD (6 decimals at most)
    expect(rec.cost).toBeGreaterThan(0);
  });
});
