import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createProject } from '../../src/daemon/store/projects.js';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { bundle, json as body, publishJson } from '../api/skills-helpers.js';
import { cliEnv, json, type CliEnv } from './cli-env.js';
import { runCliTty, tableAt } from './tty.js';

/**
 * Issue 14 point 14 (and the CLI side of point 12), as a person sees it: the CLI on a
 * pseudo-terminal, colour on (stripped before comparing), 80 columns.
 */
let f: GatewayFixture;
let env: CliEnv;
let ada: TestUser;
let projectUid: string;
const tty = (args: string[], cols = 80) => runCliTty(args, { AGW_CONFIG_DIR: env.configDir, AGW_NO_KEYRING: '1', AGW_BASE_URL: f.d.url }, cols);

beforeAll(async () => {
  // google has a key
  f = await startGatewayFixture({ env: { AGW_PROVIDER_GOOGLE_KEY: 'g-test-key-0123456789' } });
  ada = await f.d.user({ tier: 'pro', balance: 20 });
  env = cliEnv({ AGW_BASE_URL: f.d.url });
  for (const [args, input] of [
    [['login', '--with-token'], ada.key],
    [['login', '--email', ada.email], ada.password],
    [['login', '--with-token', '--profile', 'ci'], ada.key],
  ] as const) {
    const r = await env.run([...args], { input });
    if (r.code !== 0) throw new Error(r.stderr);
  }
  projectUid = (await f.db.tx((q) => createProject(q, ada.id, 'Game'))).uid;
  // calls (paid from the $5 allowance), one tagged with the project, and a skill bought from the balance
  for (const headers of [{}, { 'x-service-project-id': projectUid }]) {
    const r = await f.d.fetch('/gateway/chat', { method: 'POST', key: ada.key, headers, json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    if (r.status !== 200) throw new Error(await r.text());
  }
  const owner = await f.d.user({ tier: 'free' });
  const skill = (await body(await publishJson(f.d, owner.key, { version: '1.0.0', price: 6 }, bundle('table-skill')))).id;
  const bought = await f.d.fetch(`/skills/${skill}/install`, { method: 'POST', key: ada.key });
  if (bought.status !== 200) throw new Error(await bought.text());
});
afterAll(async () => {
  env?.cleanup();
  await f?.close();
});

/** Where each header starts in the header line. */
const starts = (header: string, names: string[]) => names.map((n) => header.indexOf(n));

describe('tables on a terminal', () => {
  test('agw providers: one line per provider, cut to the terminal width with an ellipsis, never wrapped', async () => {
    const catalog = json<{ providers: unknown[] }>(await env.run(['providers', '--json']));
    const r = await tty(['providers'], 80);
    expect(r.code).toBe(0);
    const { header, rows } = tableAt(r.screen, 'PROVIDER');
    expect(rows).toHaveLength(catalog.providers.length);
    for (const l of [header, ...rows]) expect(l.length).toBeLessThanOrEqual(80);
    expect(rows.some((l) => l.endsWith('…'))).toBe(true);
    // without a terminal every value stays whole (for scripts)
    const piped = await env.run(['providers']);
    expect(piped.stdout).not.toContain('…');
  });

  test('agw profile list: headers line up with their columns although the default profile is bold', async () => {
    const r = await tty(['profile', 'list']);
    expect(r.code).toBe(0);
    const { header, rows } = tableAt(r.screen, 'PROFILE');
    const [profile, url, creds, store] = starts(header, ['PROFILE', 'BASE URL', 'CREDENTIALS', 'STORED IN']);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.slice(profile)).toMatch(/^(default|ci) /);
      expect(row.slice(url)).toMatch(/^http:\/\/127\.0\.0\.1:\d+ /);
      expect(row.slice(creds)).toMatch(/^key/);
      expect(row.slice(store)).toMatch(/^file/);
    }
  });

  test('agw wallet transactions: amounts right-aligned, one money format, one date format, and what the allowance paid', async () => {
    const r = await tty(['wallet', 'transactions']);
    expect(r.code).toBe(0);
    const { header, rows } = tableAt(r.screen, 'DATE');
    const amountEnd = header.indexOf('AMOUNT') + 'AMOUNT'.length;
    const amounts = rows.map((l) => /(-?\$[\d,.]+)$/.exec(l.slice(0, amountEnd))?.[1]);
    expect(amounts.every(Boolean)).toBe(true); // every amount ends where its header ends
    for (const a of amounts) expect(a).toMatch(/^-?\$(\d{1,3}(,\d{3})*\.\d\d|0\.\d{2,6})$/);
    for (const l of rows) expect(l).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d UTC /);
    const purchase = rows.find((l) => l.includes('skill_purchase'))!;
    expect(purchase).toContain('allowance $'); // $6: what was left of the $5 allowance, then the balance
    expect(purchase).toContain('+ balance');
    const call = rows.find((l) => l.includes(' usage '))!;
    expect(call).toMatch(/ allowance /);
    expect(rows.find((l) => l.includes(' credit '))).not.toMatch(/allowance|balance\s+\$/);
  });

  test('agw wallet: one money and date format', async () => {
    const r = await tty(['wallet']);
    expect(r.screen).toMatch(/allowance resets\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    expect(r.screen).toMatch(/monthly allowance\s+\$5\.00/);
    expect(r.screen).toMatch(/allowance left\s+\$\d+\.\d\d this month/);
  });

  test('agw spend --project: no FAILURES column (a project report has none); counts right-aligned', async () => {
    const r = await tty(['spend', '--project', projectUid]);
    expect(r.code).toBe(0);
    const { header, rows } = tableAt(r.screen, 'PROVIDER');
    expect(header).not.toContain('FAILURES');
    expect(header.split(/\s{2,}/)).toEqual(['PROVIDER', 'CALLS', 'COST', 'RAW COST']);
    const callsEnd = header.indexOf('CALLS') + 'CALLS'.length;
    for (const l of rows) expect(l.slice(0, callsEnd)).toMatch(/\d$/);
    const piped = await env.run(['spend', '--project', projectUid]);
    expect(piped.stdout).toContain('PROVIDER\tCALLS\tCOST\tRAW COST\n');
  });

  test('agw spend: the skill purchase is part of what was charged', async () => {
    const r = await tty(['spend']);
    expect(r.code).toBe(0);
    expect(r.screen).toContain('skill purchases: 1, $6.00');
    expect(r.screen).toMatch(/charged in all: \$6\.\d+ \(calls \$0\.\d+ \+ skills \$6\.00\)/);
  });

  test('agw aliases: which models unified chat serves (every LLM provider’s, issue #28)', async () => {
    const r = await tty(['aliases'], 160);
    expect(r.code).toBe(0);
    expect(r.screen).toContain('Models for unified chat (agw chat, POST /api/gateway/chat: openai, anthropic, google, groq, mistral, deepseek, xai, together, cohere, azure-openai, bedrock and vertex models)');
    expect(r.screen).not.toContain('through the proxy');
    const chatModels = tableAt(r.screen.slice(r.screen.indexOf('Models for unified chat')), 'PROVIDER').rows;
    expect(chatModels.some((l) => l.startsWith('google ') && l.includes('gemini-2.5-flash'))).toBe(true);
  });
});
