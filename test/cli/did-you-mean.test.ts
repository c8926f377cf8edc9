import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, publishJson } from '../api/skills-helpers.js';
import { cliEnv, type CliEnv } from './cli-env.js';

/** Issue #33 item 10 on the command line: did-you-mean, the CLI command named, --version naming the skill and its versions. */
let d: TestDaemon;
let user: TestUser;
let env: CliEnv;
let skillId: number;

beforeAll(async () => {
  d = await startTestDaemon();
  user = await d.user({ tier: 'pro', balance: 5 });
  const creator = await d.user({ tier: 'pro' });
  for (const version of ['1.0.0', '1.1.0']) {
    const r = await publishJson(d, creator.key, { slug: 'weather-report', version, category: 'other' }, bundle('weather-report'));
    expect(r.status).toBe(200);
    skillId = (await r.json()).id;
  }
  env = cliEnv({ AGW_BASE_URL: d.url, AGW_API_KEY: user.key });
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

test('agw chat -m gpt-4o-mni: the hint names the model meant and `agw aliases`', async () => {
  const r = await env.run(['chat', '-m', 'gpt-4o-mni', 'hi']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('Did you mean "gpt-4o-mini"?');
  expect(r.stderr).toContain('hint: did you mean gpt-4o-mini? agw aliases lists the aliases and models you can use');
});

test('agw skill install weather-reprot: did you mean weather-report', async () => {
  const r = await env.run(['skill', 'install', 'weather-reprot', '--yes']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('error SKILL_NOT_FOUND');
  expect(r.stderr).toContain('hint: did you mean weather-report?');
});

test('agw skill install weather-report --version 9.9.9 names the skill and its versions; nothing is installed', async () => {
  const r = await env.run(['skill', 'install', 'weather-report', '--version', '9.9.9', '--yes']);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain('error VERSION_NOT_FOUND: skill weather-report has no published version 9.9.9; nothing was installed or charged');
  expect(r.stderr).toContain('hint: its versions: 1.1.0 (current), 1.0.0; leave out --version for the current one');
  const skill = await (await d.fetch(`/skills/${skillId}`)).json();
  expect(skill.installCount).toBe(0);
  const ok = await env.run(['skill', 'install', 'weather-report', '--version', '1.0.0', '--yes', '--json']);
  expect(ok.code, ok.stderr).toBe(0);
});
