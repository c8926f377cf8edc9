import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createProject } from '../../src/daemon/store/projects.js';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { startTestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin } from '../helpers/portal.js';
import { ANSI, cliEnv, json, type CliEnv } from './cli-env.js';

/** The account commands and chat against a real daemon whose chat providers are simulated. */
let f: GatewayFixture;
let env: CliEnv;
let ada: TestUser;

beforeAll(async () => {
  f = await startGatewayFixture({ yaml: 'wallet: { selfTopup: true }\n' });
  ada = await f.d.user({ tier: 'pro', balance: 20 });
  env = cliEnv({ AGW_BASE_URL: f.d.url, NO_COLOR: undefined });
  const login = await env.run(['login', '--with-token'], { input: ada.key });
  if (login.code !== 0) throw new Error(login.stderr);
  // one call, so the wallet has drawn on its allowance and has a transaction
  const first = await env.run(['chat', 'warm up']);
  if (first.code !== 0) throw new Error(first.stderr);
});
afterAll(async () => {
  env?.cleanup();
  await f?.close();
});

const api = async (path: string, key = ada.key) => {
  const r = await f.d.fetch(path, { key });
  expect(r.status, path).toBe(200);
  return r.json();
};

describe('--json prints the API answer unchanged', () => {
  test.each([
    ['entitlements', '/gateway/entitlements'],
    ['aliases', '/gateway/aliases'],
    ['providers', '/portal/providers/public'],
    ['wallet', '/wallet'],
    ['wallet transactions --limit 5', '/wallet/transactions?limit=5'],
  ])('agw %s --json equals GET %s', async (cmd, path) => {
    const r = await env.run([...cmd.split(' '), '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(json(r)).toEqual(await api(path));
  });

  test('agw providers ID --json is that provider’s entry; an unknown id fails with the list', async () => {
    const catalog = (await api('/portal/providers/public')) as { providers: { id: string }[] };
    expect(json(await env.run(['providers', 'anthropic', '--json']))).toEqual(catalog.providers.find((p) => p.id === 'anthropic'));
    const r = await env.run(['providers', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('hint: providers: openai, anthropic');
  });

  test('wallet topup answers the new wallet; bad amounts are usage errors and change nothing', async () => {
    const before = (await api('/wallet')) as { balance: number };
    const r = await env.run(['wallet', 'topup', '2.5', '--json']);
    expect(r.code).toBe(0);
    expect(json(r)).toEqual(await api('/wallet'));
    expect(json<{ balance: number }>(r).balance).toBeCloseTo(before.balance + 2.5, 9);
    for (const bad of ['0', '-1', 'ten', '10001']) expect((await env.run(['wallet', 'topup', bad])).code).toBe(2);
    expect(((await api('/wallet')) as { balance: number }).balance).toBeCloseTo(before.balance + 2.5, 9);
  });
});

test('wallet topup where self top-up is off: exit 1, TOPUP_DISABLED saying how to get credit, nothing credited', async () => {
  const d = await startTestDaemon(); // wallet.selfTopup defaults to false
  const e = cliEnv({ AGW_BASE_URL: d.url });
  try {
    const u = await d.user({ balance: 1 });
    expect((await e.run(['login', '--with-token'], { input: u.key })).code).toBe(0);
    const r = await e.run(['wallet', 'topup', '5']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error TOPUP_DISABLED: self top-up is off on this service: .*agw admin wallet credit/);
    expect(r.stderr).toContain('hint: this service does not let accounts top themselves up: ask its operator to run agw admin wallet credit YOUR_EMAIL AMOUNT');
    expect(((await (await d.fetch('/wallet', { key: u.key })).json()) as { balance: number }).balance).toBe(1);
  } finally {
    e.cleanup();
    await d.close();
  }
});

test('human output: tables without escape codes when stdout is not a terminal', async () => {
  const cases: [string[], string][] = [
    [['entitlements'], 'USAGE TYPE\tUSED\tLIMIT\tREMAINING'],
    [['aliases'], 'ALIAS\tALLOWED\t'],
    [['providers'], 'PROVIDER\tCATEGORY\tKEY'],
    [['providers', 'openai'], 'MODEL\tIN /1M\tOUT /1M'],
    [['wallet'], 'monthly allowance'],
    [['wallet'], 'available'],
    [['wallet', 'transactions'], 'DATE\tTYPE\tAMOUNT\tPAID FROM\tBALANCE\tDESCRIPTION'],
    [['whoami'], ada.id],
  ];
  for (const [args, expected] of cases) {
    const r = await env.run(args);
    expect(r.code, args.join(' ')).toBe(0);
    expect(r.stdout, args.join(' ')).toContain(expected);
    expect(r.stdout + r.stderr, args.join(' ')).not.toMatch(ANSI);
  }
});

describe('agw chat', () => {
  test('prints the reply; --stream prints the same text; --json is the API answer; stdin is the prompt', async () => {
    const plain = await env.run(['chat', 'Hello there', '--model', 'smart-pro']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/Hello there/);
    expect(plain.stdout).not.toMatch(ANSI);
    const streamed = await env.run(['chat', 'Hello there', '--model', 'smart-pro', '--stream']);
    expect(streamed.code).toBe(0);
    expect(streamed.stdout).toBe(plain.stdout);

    const s = json<{ provider: string; model: string; viaAlias: boolean; content: string; usage: { prompt_tokens: number; completion_tokens: number } }>(
      await env.run(['chat', 'Hello there', '--stream', '--json', '--model', 'smart-lite']),
    );
    expect(s).toMatchObject({ provider: 'openai', viaAlias: true, content: plain.stdout.trim() });
    expect(s.usage.completion_tokens).toBeGreaterThan(0);
    const openai = json<{ choices: { message: { content: string } }[] }>(await env.run(['chat', '--json', '--model', 'gpt-4o-mini'], { input: 'Hello there\n' }));
    expect(openai.choices[0].message.content).toBe(plain.stdout.trim());
  });

  test('--max-tokens and --temperature are checked before anything is sent', async () => {
    expect((await env.run(['chat', 'x', '--max-tokens', '0'])).code).toBe(2);
    expect((await env.run(['chat', 'x', '--temperature', '3'])).code).toBe(2);
  });
});

describe('issue #33 item 11: agw chat on a small wallet', () => {
  test('`agw chat hi` asks for a sensible max_tokens by default, so a small wallet is enough', async () => {
    const small = await f.d.user({ tier: 'free', balance: 0.005 });
    const r = await env.run(['chat', 'hi'], { env: { AGW_API_KEY: small.key } });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(f.openai.requests.at(-1)!.body).max_tokens).toBe(1024);
  });

  test('a 402 whose call a shorter answer would fit names --max-tokens with the number that fits', async () => {
    const small = await f.d.user({ tier: 'free', balance: 0.005 });
    const r = await env.run(['chat', 'hi', '--max-tokens', 'max'], { env: { AGW_API_KEY: small.key } });
    expect(r.code).toBe(1);
    const fits = /--max-tokens (\d+)/.exec(r.stderr)?.[1];
    expect(r.stderr).toMatch(/^error INSUFFICIENT_FUNDS: .+\nhint: ask for a shorter answer: --max-tokens \d+ \(the wallet covers about \d+ output tokens; this call asked for the model’s own output limit\)/);
    const again = await env.run(['chat', 'hi', '--max-tokens', fits!], { env: { AGW_API_KEY: small.key } });
    expect(again.code, again.stderr).toBe(0);
  });
});

describe('server errors: code, message and a hint on stderr, exit 1', () => {
  test('402 INSUFFICIENT_FUNDS says how to top up', async () => {
    const broke = await f.d.user({ tier: 'free', balance: 0 });
    const r = await env.run(['chat', 'hi'], { env: { AGW_API_KEY: broke.key } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^error INSUFFICIENT_FUNDS: .+\nhint: top up: agw wallet topup AMOUNT/);
  });

  test('403 MODEL_NOT_ALLOWED points at the tier', async () => {
    const free = await f.d.user({ tier: 'free', balance: 5 });
    const r = await env.run(['chat', 'hi', '--model', 'smart-pro'], { env: { AGW_API_KEY: free.key } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error MODEL_NOT_ALLOWED: .+\nhint: your tier does not include this model/);
  });

  test('429 QUOTA_EXCEEDED names the reset time from the entitlements', async () => {
    const capped = await f.d.user({ tier: 'pro', balance: 5, quotas: { ai_chat: 0 } });
    const { period } = (await api('/gateway/entitlements', capped.key)) as { period: { resetsAt: string } };
    const r = await env.run(['chat', 'hi'], { env: { AGW_API_KEY: capped.key } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error QUOTA_EXCEEDED: ');
    expect(r.stderr).toContain(`hint: the quota resets at ${period.resetsAt}`);
  });

  test('401 says to log in; with --json the error is one JSON line on stderr and stdout stays empty', async () => {
    const r = await env.run(['wallet', '--json'], { env: { AGW_API_KEY: 'agw_revoked_or_wrong' } });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(JSON.parse(r.stderr)).toEqual({ error: 'invalid or revoked credentials', code: 'UNAUTHORIZED', hint: expect.stringContaining('the key in AGW_API_KEY was refused') });
  });

  test('issue #33 item 13: a refused key\'s hint says where the key came from and never goes in circles', async () => {
    const fromEnv = await env.run(['wallet'], { env: { AGW_API_KEY: 'agw_bad' } });
    expect(fromEnv.code).toBe(1);
    const envHint = /hint: (.*)/.exec(fromEnv.stderr)![1];
    expect(envHint).toContain('the key in AGW_API_KEY was refused');
    expect(envHint).toContain('unset AGW_API_KEY');
    expect(envHint).not.toMatch(/or set AGW_API_KEY/);

    const other = cliEnv({ AGW_BASE_URL: f.d.url });
    try {
      const gone = await f.d.user({ tier: 'free' });
      expect((await other.run(['login', '--with-token'], { input: gone.key })).code).toBe(0);
      expect((await f.d.fetch(`/keys/${gone.keyId}`, { method: 'DELETE', key: gone.key })).status).toBe(200);
      const stored = await other.run(['wallet']);
      expect(stored.code).toBe(1);
      const hint = /hint: (.*)/.exec(stored.stderr)![1];
      expect(hint).toContain('the key saved for this profile was refused');
      expect(hint).toContain('agw login');
      expect(hint).not.toContain('AGW_API_KEY');
    } finally {
      other.cleanup();
    }
  });
});

describe('agw spend: one login is enough', () => {
  test('logged in with a key (issue #33 item 12: no NO_SESSION); after login --email, --json equals the API answer', async () => {
    const { cookie } = await portalLogin(f.d, ada);
    const session = async (path: string) => (await f.d.fetch(path, { headers: { cookie } })).json();
    const noSince = (x: { range: { since: string } }) => ({ ...x, range: { ...x.range, since: undefined } });
    const withKey = await env.run(['spend', '--json', '--range', '7d']);
    expect(withKey.code, withKey.stderr).toBe(0);
    expect(noSince(json(withKey))).toEqual(noSince((await session('/portal/spend/summary?range=7d')) as never));

    expect((await env.run(['login', '--email', ada.email], { input: ada.password })).code).toBe(0);

    const r = await env.run(['spend', '--json', '--range', '7d']);
    expect(r.code).toBe(0);
    const mine = json<{ range: { since: string; days: number }; totals: { calls: number } }>(r);
    const theirs = (await session('/portal/spend/summary?range=7d')) as typeof mine;
    expect(noSince(mine)).toEqual(noSince(theirs)); // since is "now - 7 days", a few ms apart
    expect(Math.abs(Date.parse(mine.range.since) - Date.parse(theirs.range.since))).toBeLessThan(60_000);
    expect(mine.totals.calls).toBeGreaterThan(0);

    const project = await f.db.tx((q) => createProject(q, ada.id, 'Game'));
    const p = await env.run(['spend', '--json', '--project', project.uid]);
    expect(p.code).toBe(0);
    expect(noSince(json(p))).toEqual(noSince((await session(`/portal/spend/projects/${project.uid}?range=30d`)) as never));

    const human = await env.run(['spend']);
    expect(human.stdout).toContain('PROVIDER\tCALLS\tFAILURES\tCOST\tRAW COST');
    expect(human.stdout).not.toMatch(ANSI);
    expect((await env.run(['spend', '--range', '400d'])).code).toBe(2);
    const missing = await env.run(['spend', '--project', 'prj_nope']);
    expect(missing.code).toBe(1);
  });

  test('a key with limits does not read the account\'s spend: 403 with a hint that does not go in circles', async () => {
    const made = await f.d.fetch('/keys', { method: 'POST', key: ada.key, json: { name: 'ci', limits: { budget: 1 } } });
    const limited = (await made.json()).key as string;
    const r = await env.run(['spend'], { env: { AGW_API_KEY: limited, AGW_PROFILE: 'nobody' } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error FORBIDDEN: a key with limits or an expiry cannot read the account’s spend');
    expect(r.stderr).toContain('hint: log in as the account to see its spend');
  });
});
