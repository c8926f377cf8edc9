import { afterAll, beforeAll, expect, test } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { publishJson, skillMd } from '../api/skills-helpers.js';
import { cliEnv, type CliEnv } from './cli-env.js';

/** Issue #33 item 15: the CLI's output nits, as a person reads them. */
let d: TestDaemon;
let user: TestUser;
let env: CliEnv;
beforeAll(async () => {
  d = await startTestDaemon();
  user = await d.user({ tier: 'free', balance: 15 });
  env = cliEnv({ AGW_BASE_URL: d.url, AGW_API_KEY: user.key });
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

test('agw wallet: "available  $15.00", not "available $15.00 available"', async () => {
  const r = await env.run(['wallet']);
  expect(r.code, r.stderr).toBe(0);
  const line = r.stdout.split('\n').find((l) => l.startsWith('available'))!;
  expect(line.replace(/\s+/g, ' ')).toBe('available $15.00');
});

test('agw admin wallet credit prints the money formatted', async () => {
  const r = await runCli(['admin', 'wallet', 'credit', user.email, '1.6', '--data', d.dataDir, '--config', d.configFile]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe(`credited $1.60 to ${user.email}: balance $16.60\n`);
});

test('piped agw skill search prints every description whole', async () => {
  const long = 'Reports the weather for any city on Earth, with hourly forecasts, warnings, sunrise and sunset times, and the air quality index.';
  const res = await publishJson(d, user.key, { slug: 'weather-long', version: '1.0.0', category: 'other' }, [{ path: 'SKILL.md', content: skillMd('weather-long', long) }]);
  expect(res.status).toBe(200);
  const r = await env.run(['skill', 'search', 'weather']);
  expect(r.code, r.stderr).toBe(0);
  const row = r.stdout.split('\n').find((l) => l.includes('weather-long'))!;
  expect(row.split('\t').at(-1)).toBe(long);
});
