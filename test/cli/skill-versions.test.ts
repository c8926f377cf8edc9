import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { cliEnv, json, type CliEnv } from './cli-env.js';

/**
 * Versions through the real CLI (issue #33): release notes from a changelog's section
 * (item 6), prereleases that do not move anyone (item 4), one version withdrawn (item 5).
 */
let d: TestDaemon;
let creator: TestUser;
let user: TestUser;
let env: CliEnv;
let dir: string;

const asUser = (cwd?: string) => ({ env: { AGW_API_KEY: user.key }, ...(cwd ? { cwd } : {}) });
const CHANGELOG = `# Changelog

## [Unreleased]

## [1.2.0-beta.1] - 2024-06-01

### Added
- A **beta** of the hourly forecast.

## [1.1.0] - 2024-05-01

### Added
- Forecasts for any city.

## [1.0.0] - 2024-04-01

- First release.

[1.1.0]: https://example.com/v1.1.0
`;

beforeAll(async () => {
  d = await startTestDaemon();
  creator = await d.user();
  user = await d.user();
  env = cliEnv({ AGW_BASE_URL: d.url, NO_COLOR: undefined });
  if ((await env.run(['login', '--with-token'], { input: creator.key })).code !== 0) throw new Error('login failed');
  expect((await env.run(['skill', 'init', 'forecast'])).code).toBe(0);
  dir = join(env.dir, 'forecast');
  const md = join(dir, 'SKILL.md');
  writeFileSync(md, readFileSync(md, 'utf8').replace(/^description: .*$/m, 'description: Forecasts the weather. Use it for trips.'));
  writeFileSync(join(dir, 'CHANGELOG.md'), CHANGELOG);
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

const publicNotes = async (version: string) => {
  const v = json<{ versions: { version: string; notes: string }[] }>(await env.run(['skill', 'versions', 'forecast', '--json']));
  return v.versions.find((x) => x.version === version)?.notes;
};

describe('release notes from CHANGELOG.md (item 6)', () => {
  test('--notes-file CHANGELOG.md stores this version’s section, not the whole file', async () => {
    for (const v of ['1.0.0', '1.1.0']) {
      const r = await env.run(['skill', 'publish', '--version', v, '--notes-file', 'CHANGELOG.md'], { cwd: dir });
      expect(r.code, r.stderr).toBe(0);
    }
    expect(await publicNotes('1.1.0')).toBe('### Added\n- Forecasts for any city.');
    expect(await publicNotes('1.0.0')).toBe('- First release.');
  });

  test('a changelog without the version’s section is a usage error naming the ones it has; nothing is uploaded', async () => {
    const r = await env.run(['skill', 'publish', '--version', '1.3.0', '--notes-file', 'CHANGELOG.md'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('error: CHANGELOG.md has no section for version 1.3.0 (it has 1.2.0-beta.1, 1.1.0, 1.0.0)');
    expect(r.stderr).toContain('hint: add a "## [1.3.0]" heading');
    expect(json<{ versions: unknown[] }>(await env.run(['skill', 'versions', 'forecast', '--all', '--json'])).versions).toHaveLength(2);
  });

  test('notes --file takes the section too', async () => {
    writeFileSync(join(dir, 'CHANGELOG.md'), CHANGELOG.replace('- First release.', '- First release, for real.'));
    expect((await env.run(['skill', 'notes', 'forecast', '1.0.0', '--file', 'CHANGELOG.md'], { cwd: dir })).code).toBe(0);
    expect(await publicNotes('1.0.0')).toBe('- First release, for real.');
  });
});

describe('a prerelease (item 4)', () => {
  test('1.2.0-beta.1 published after 1.1.0: install and update keep everyone on 1.1.0; versions marks the beta', async () => {
    const project = join(env.dir, 'project');
    mkdirSync(project);
    expect((await env.run(['skill', 'install', 'forecast'], asUser(project))).stdout).toMatch(/^installed forecast 1\.1\.0 /);
    const beta = await env.run(['skill', 'publish', '--version', '1.2.0-beta.1', '--notes-file', 'CHANGELOG.md'], { cwd: dir });
    expect(beta.code, beta.stderr).toBe(0);
    expect((await env.run(['skill', 'install', 'forecast', '--for', 'claude'], asUser(project))).stdout).toMatch(/^installed forecast 1\.1\.0 /);
    expect((await env.run(['skill', 'update'], asUser(project))).stdout).toBe('forecast 1.1.0 is up to date\nforecast 1.1.0 is up to date\n');
    const listed = await env.run(['skill', 'versions', 'forecast']);
    expect(listed.stdout).toMatch(/^forecast \(id \d+\), current 1\.1\.0\nVERSION\tPUBLISHED\tINSTALLS\tNOTES\n1\.2\.0-beta\.1 \(prerelease\)\t.*\n1\.1\.0 \*\t/);
    expect(json<{ versions: { version: string; prerelease: boolean }[] }>(await env.run(['skill', 'versions', 'forecast', '--json'])).versions[0]).toMatchObject({
      version: '1.2.0-beta.1',
      prerelease: true,
    });
  });

  test('install --version 1.2.0-beta.1 still works', async () => {
    const r = await env.run(['skill', 'install', 'forecast', '--version', '1.2.0-beta.1', '--dir', join(env.dir, 'beta', 'forecast'), '--json'], asUser());
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ version: '1.2.0-beta.1', slug: 'forecast' });
    expect(readFileSync(join(env.dir, 'beta', 'forecast', 'SKILL.md'), 'utf8')).toContain('name: forecast');
  });

  test('the owner makes the beta current (--set-current), update moves on to it; --auto-current hands it back', async () => {
    const set = await env.run(['skill', 'versions', 'forecast', '--set-current', '1.2.0-beta.1']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stderr).toBe('current version: 1.2.0-beta.1\n');
    expect(set.stdout).toMatch(/^forecast \(id \d+\), current 1\.2\.0-beta\.1 \(chosen by the owner\)\nVERSION\tSTATUS\t/);
    const upd = await env.run(['skill', 'update', '--json'], asUser(join(env.dir, 'project')));
    expect(json<{ items: { to: string; updated: boolean }[] }>(upd).items.map((i) => [i.to, i.updated])).toEqual([
      ['1.2.0-beta.1', true],
      ['1.2.0-beta.1', true],
    ]);
    const auto = await env.run(['skill', 'versions', 'forecast', '--auto-current']);
    expect(auto.stderr).toBe('current version by the rule: 1.1.0\n');
    expect((await env.run(['skill', 'versions', 'forecast', '--set-current', '1.2.0-beta.1', '--auto-current'])).code).toBe(2);
  });
});

describe('archiving one version (item 5)', () => {
  test('versions --archive withdraws it: never current, a new account cannot install it; republish brings it back', async () => {
    const r = await env.run(['skill', 'versions', 'forecast', '--archive', '1.1.0']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('archived 1.1.0: only accounts that installed it can install it again\n');
    expect(r.stdout).toMatch(/\n1\.1\.0\tarchived\t/);
    expect(r.stdout).toMatch(/current 1\.0\.0\n/);
    // the account that had it still installs it; a new one is refused
    expect((await env.run(['skill', 'install', 'forecast', '--version', '1.1.0', '--dir', join(env.dir, 'keep', 'forecast')], asUser())).code).toBe(0);
    const stranger = await d.user();
    const refused = await env.run(['skill', 'install', 'forecast', '--version', '1.1.0', '--dir', join(env.dir, 'new', 'forecast')], { env: { AGW_API_KEY: stranger.key } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error VERSION_ARCHIVED');
    expect((await env.run(['skill', 'versions', 'forecast', '--archive', '1.2.0-beta.1'])).code).toBe(0);
    const last = await env.run(['skill', 'versions', 'forecast', '--archive', '1.0.0']);
    expect(last.code).toBe(1);
    expect(last.stderr).toContain('error LAST_PUBLISHED_VERSION');
    expect((await env.run(['skill', 'republish', 'forecast', '1.1.0'])).code).toBe(0);
    expect(json<{ currentVersion: string }>(await env.run(['skill', 'info', 'forecast', '--json'])).currentVersion).toBe('1.1.0');
  });
});
