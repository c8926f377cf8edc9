import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { runOnTerminal } from '../helpers/cli.js';
import { publishJson, type FileSpec } from '../api/skills-helpers.js';
import { ANSI, cliEnv, json, type CliEnv } from './cli-env.js';

/**
 * Skills go where agents read them: `agw skill install` into each agent's folder (project and
 * --global, in a temp HOME), the lockfile, `install --frozen`, `list` noticing changed files,
 * `update` across versions with release notes, `remove`, and the question before money moves.
 */
let d: TestDaemon;
let creator: TestUser;
let buyer: TestUser;
let env: CliEnv;
let home: string;
let project: string;

// The slug differs from the front-matter name on purpose: the folder is named after the name.
const SLUG = 'tiny-slug';
const NAME = 'tiny-tool';
const v1: FileSpec[] = [
  { path: 'SKILL.md', content: `---\nname: ${NAME}\ndescription: Echoes things for tests.\n---\n# Tiny\n\nVersion one.\n` },
  { path: 'scripts/run.sh', content: '#!/bin/sh\necho tiny\n' },
  { path: 'assets/data.bin', content: Buffer.from([0, 1, 2, 250, 251, 255]) },
];
const v2: FileSpec[] = [{ ...v1[0], content: String(v1[0].content).replace('Version one.', 'Version two.') }, v1[1], v1[2], { path: 'references/REFERENCE.md', content: '# More\n' }];

const asBuyer = (extra: Record<string, string> = {}) => ({ env: { AGW_API_KEY: buyer.key, HOME: home, ...extra } });
const inProject = (extra: Record<string, string> = {}) => ({ ...asBuyer(extra), cwd: project });
const balance = async (key: string) => ((await (await d.fetch('/wallet', { key })).json()) as { balance: number }).balance;
const read = (p: string) => readFileSync(p);
const lockOf = (root: string) => JSON.parse(readFileSync(join(root, '.agents', 'skills.lock.json'), 'utf8'));
const sameFiles = (dir: string, files: FileSpec[]) => {
  const listed = (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1)).sort();
  expect(listed).toEqual(files.map((f) => f.path).sort());
  for (const f of files) expect(read(join(dir, f.path)).equals(Buffer.from(f.content)), f.path).toBe(true);
};

beforeAll(async () => {
  d = await startTestDaemon();
  creator = await d.user({ tier: 'pro' });
  buyer = await d.user({ tier: 'free', balance: 10 });
  env = cliEnv({ AGW_BASE_URL: d.url });
  home = join(env.dir, 'home');
  project = join(env.dir, 'project');
  mkdirSync(home);
  mkdirSync(project);
  const pub = await publishJson(d, creator.key, { version: '1.0.0', slug: SLUG, notes: 'First' }, v1);
  expect(pub.status).toBe(200);
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

describe('agw skill install', () => {
  test('installs into .agents/skills/<front-matter name> by default, byte for byte, and writes the lockfile', async () => {
    const r = await env.run(['skill', 'install', SLUG, '--json'], inProject());
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const dir = join(project, '.agents', 'skills', NAME);
    expect(json(r)).toMatchObject({ slug: SLUG, name: NAME, version: '1.0.0', target: 'agents', dir, lockfile: join(project, '.agents', 'skills.lock.json'), verified: 'signature', digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), findings: [] });
    sameFiles(dir, v1);
    const lock = lockOf(project);
    expect(lock.lockfileVersion).toBe(1);
    expect(lock.skills).toEqual([
      { slug: SLUG, name: NAME, version: '1.0.0', target: 'agents', dir: `.agents/skills/${NAME}`, digest: json<{ digest: string }>(r).digest, files: expect.objectContaining({ 'SKILL.md': expect.stringMatching(/^[0-9a-f]{64}$/) }) },
    ]);
    expect(Object.keys(lock.skills[0].files).sort()).toEqual(v1.map((f) => f.path).sort());
    // human output (not a terminal): one plain line
    const again = await env.run(['skill', 'install', SLUG], inProject());
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(`installed ${SLUG} 1.0.0 into .agents/skills/${NAME} (3 files)\n`);
  });

  test.each([
    ['claude', '.claude'], ['cursor', '.cursor'], ['goose', '.goose'],
  ])('--for %s installs into %s/skills/<name>', async (agent, folder) => {
    const r = await env.run(['skill', 'install', SLUG, '--for', agent], inProject());
    expect(r.code, r.stderr).toBe(0);
    sameFiles(join(project, folder, 'skills', NAME), v1);
    expect(lockOf(project).skills.find((e: { target: string }) => e.target === agent)).toMatchObject({ dir: `${folder}/skills/${NAME}`, version: '1.0.0' });
  });

  test('--global installs under the home folder with its own lockfile; --dir is the skill’s own folder', async () => {
    const g = await env.run(['skill', 'install', SLUG, '--global', '--for', 'claude'], inProject());
    expect(g.code, g.stderr).toBe(0);
    sameFiles(join(home, '.claude', 'skills', NAME), v1);
    expect(lockOf(home).skills).toEqual([expect.objectContaining({ slug: SLUG, target: 'claude', dir: `.claude/skills/${NAME}` })]);
    const custom = join(env.dir, 'elsewhere', 'mine');
    const r = await env.run(['skill', 'install', SLUG, '--dir', custom, '--json'], inProject());
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ target: 'dir', dir: custom });
    sameFiles(custom, v1);
    expect(lockOf(project).skills.find((e: { target: string }) => e.target === 'dir').dir).toBe(custom);
    expect((await env.run(['skill', 'install', SLUG, '--dir', custom, '--for', 'claude'], inProject())).code).toBe(2);
    expect((await env.run(['skill', 'install', SLUG, '--for', 'vim'], inProject())).code).toBe(2);
  });

  test('a folder agw did not install is never overwritten without --force; a changed one neither', async () => {
    const foreign = join(project, '.cursor', 'skills', 'other');
    mkdirSync(foreign, { recursive: true });
    writeFileSync(join(foreign, 'SKILL.md'), 'mine');
    const r = await env.run(['skill', 'install', SLUG, '--dir', foreign], inProject());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error DIR_EXISTS: .*was not installed by agw\nhint: .*--force/);
    expect(readFileSync(join(foreign, 'SKILL.md'), 'utf8')).toBe('mine');

    const dir = join(project, '.agents', 'skills', NAME);
    writeFileSync(join(dir, 'SKILL.md'), 'local edit');
    const changed = await env.run(['skill', 'install', SLUG], inProject());
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain('error DIR_MODIFIED');
    expect(readFileSync(join(dir, 'SKILL.md'), 'utf8')).toBe('local edit');
    expect((await env.run(['skill', 'install', SLUG, '--force'], inProject())).code).toBe(0);
    sameFiles(dir, v1);
    expect(readdirSync(join(project, '.agents', 'skills'))).toEqual([NAME]); // no temp folders left
  });
});

describe('agw skill list', () => {
  test('lists what the lockfile records and notices a changed, added or missing file', async () => {
    type Item = { slug: string; name: string; version: string; target: string; dir: string; modified: boolean };
    const listed = async () => json<{ items: Item[] }>(await env.run(['skill', 'list', '--json'], inProject())).items;
    const agents = async () => (await listed()).find((i) => i.target === 'agents')!;
    expect(await agents()).toEqual({ slug: SLUG, name: NAME, version: '1.0.0', target: 'agents', dir: join(project, '.agents', 'skills', NAME), modified: false });
    expect((await listed()).every((i) => !i.modified)).toBe(true);
    const dir = join(project, '.agents', 'skills', NAME);
    writeFileSync(join(dir, 'scripts', 'run.sh'), '#!/bin/sh\necho changed\n');
    expect((await agents()).modified).toBe(true);
    writeFileSync(join(dir, 'scripts', 'run.sh'), String(v1[1].content));
    expect((await agents()).modified).toBe(false);
    writeFileSync(join(dir, 'extra.md'), 'x');
    expect((await agents()).modified).toBe(true);
    rmSync(join(dir, 'extra.md'));
    rmSync(join(dir, 'assets', 'data.bin'));
    expect((await agents()).modified).toBe(true);
    const human = await env.run(['skill', 'list'], inProject());
    expect(human.stdout).toMatch(new RegExp(`^SLUG\\tVERSION\\tTARGET\\tDIR\\tMODIFIED\\n(.*\\n)*${SLUG}\\t1\\.0\\.0\\tagents\\t\\.agents/skills/${NAME}\\tyes\\n`));
    expect(human.stdout).not.toMatch(ANSI);
    expect(json<{ items: Item[] }>(await env.run(['skill', 'list', '--global', '--json'], inProject())).items.map((i) => i.target)).toEqual(['claude']);
    expect((await env.run(['skill', 'install', SLUG, '--force'], inProject())).code).toBe(0);
  });
});

describe('a lockfile edited by hand', () => {
  test('an entry missing its fields is BAD_LOCKFILE with advice, never a crash', async () => {
    const root = join(env.dir, 'hand-edited');
    mkdirSync(join(root, '.agents'), { recursive: true });
    writeFileSync(join(root, '.agents', 'skills.lock.json'), JSON.stringify({ lockfileVersion: 1, skills: [{ slug: SLUG, name: NAME }] }));
    for (const args of [['skill', 'list'], ['skill', 'remove', SLUG]]) {
      const r = await env.run(args, { ...asBuyer(), cwd: root });
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr).toContain('BAD_LOCKFILE');
      expect(r.stderr).toContain('skills[0]');
      expect(r.stderr).not.toMatch(/this is a bug|TypeError/);
    }
  });
});

describe('agw skill install --frozen', () => {
  test('reproduces the lockfile in a fresh checkout, byte for byte', async () => {
    const ci = join(env.dir, 'ci-checkout');
    mkdirSync(join(ci, '.agents'), { recursive: true });
    cpSync(join(project, '.agents', 'skills.lock.json'), join(ci, '.agents', 'skills.lock.json'));
    const lockBefore = readFileSync(join(ci, '.agents', 'skills.lock.json'), 'utf8');
    const r = await env.run(['skill', 'install', '--frozen', '--json'], { ...asBuyer(), cwd: ci });
    expect(r.code, r.stderr).toBe(0);
    const items = json<{ items: { slug: string; dir: string; changed: boolean }[] }>(r).items;
    expect(items.length).toBe(lockOf(project).skills.length);
    for (const folder of ['.agents', '.claude', '.cursor', '.goose']) sameFiles(join(ci, folder, 'skills', NAME), v1);
    expect(readFileSync(join(ci, '.agents', 'skills.lock.json'), 'utf8')).toBe(lockBefore);
    // a second run changes nothing
    const again = json<{ items: { changed: boolean }[] }>(await env.run(['skill', 'install', '--frozen', '--json'], { ...asBuyer(), cwd: ci }));
    expect(again.items.every((i) => !i.changed)).toBe(true);
  });

  test('fails with exit 1 and writes nothing when the published version no longer matches the lockfile', async () => {
    const ci = join(env.dir, 'ci-mismatch');
    mkdirSync(join(ci, '.agents'), { recursive: true });
    const lock = lockOf(project);
    lock.skills = lock.skills.filter((e: { target: string }) => e.target === 'agents');
    lock.skills[0].files['SKILL.md'] = '0'.repeat(64);
    writeFileSync(join(ci, '.agents', 'skills.lock.json'), JSON.stringify(lock));
    const r = await env.run(['skill', 'install', '--frozen'], { ...asBuyer(), cwd: ci });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error LOCKFILE_MISMATCH: tiny-slug 1\.0\.0 differs from the lockfile \(SKILL\.md: changed\); nothing was written\n/);
    expect(existsSync(join(ci, '.agents', 'skills'))).toBe(false);

    const none = await env.run(['skill', 'install', '--frozen'], { ...asBuyer(), cwd: join(env.dir, 'elsewhere') });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('error NO_LOCKFILE');
    expect((await env.run(['skill', 'install', SLUG, '--frozen'], inProject())).code).toBe(2);
  });
});

describe('agw skill update and remove', () => {
  test('update moves to the newest version and prints its release notes; remove deletes folder and entry', async () => {
    const pub = await publishJson(d, creator.key, { version: '1.1.0', slug: SLUG, notes: 'Adds a reference file' }, v2);
    expect(pub.status).toBe(200);
    const r = await env.run(['skill', 'update', SLUG], inProject());
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`updated ${SLUG} 1.0.0 → 1.1.0 in .agents/skills/${NAME}\n\n1.1.0\nAdds a reference file\n`);
    for (const folder of ['.agents', '.claude', '.cursor', '.goose']) sameFiles(join(project, folder, 'skills', NAME), v2);
    expect(lockOf(project).skills.filter((e: { slug: string }) => e.slug === SLUG).every((e: { version: string }) => e.version === '1.1.0')).toBe(true);
    const again = json<{ items: { updated: boolean; from: string; to: string }[] }>(await env.run(['skill', 'update', '--json'], inProject()));
    expect(again.items.every((i) => !i.updated && i.from === '1.1.0')).toBe(true);
    // an older version on request
    const old = await env.run(['skill', 'install', SLUG, '--for', 'goose', '--version', '1.0.0', '--json'], inProject());
    expect(json(old)).toMatchObject({ version: '1.0.0' });
    sameFiles(join(project, '.goose', 'skills', NAME), v1);

    const rm1 = await env.run(['skill', 'remove', SLUG, '--for', 'cursor', '--json'], inProject());
    expect(rm1.code).toBe(0);
    expect(json(rm1)).toEqual({ removed: [expect.objectContaining({ slug: SLUG, target: 'cursor', dir: join(project, '.cursor', 'skills', NAME) })] });
    expect(existsSync(join(project, '.cursor', 'skills', NAME))).toBe(false);
    expect(lockOf(project).skills.some((e: { target: string }) => e.target === 'cursor')).toBe(false);
    writeFileSync(join(project, '.claude', 'skills', NAME, 'SKILL.md'), 'edited');
    const refused = await env.run(['skill', 'remove', SLUG, '--for', 'claude'], inProject());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('error DIR_MODIFIED');
    expect(existsSync(join(project, '.claude', 'skills', NAME))).toBe(true);
    const all = await env.run(['skill', 'remove', SLUG, '--force'], inProject());
    expect(all.code).toBe(0);
    expect(lockOf(project).skills.filter((e: { slug: string }) => e.slug === SLUG)).toEqual([]);
    for (const folder of ['.agents', '.claude', '.goose']) expect(existsSync(join(project, folder, 'skills', NAME))).toBe(false);
    const missing = await env.run(['skill', 'remove', SLUG], inProject());
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error NOT_INSTALLED');
  });
});

/** The CLI on a pseudo-terminal in the project, signed in to the test daemon, typing `answer` at its [y/N] question. */
const onTerminal = (args: string[], answer: string, extraEnv: Record<string, string>) =>
  runOnTerminal(args, answer, { cwd: project, env: { AGW_CONFIG_DIR: env.configDir, AGW_NO_KEYRING: '1', AGW_BASE_URL: d.url, ...extraEnv } });

describe('paid installs ask first', () => {
  const PAID = 'paid-skill';
  beforeAll(async () => {
    const files = [{ path: 'SKILL.md', content: '---\nname: paid-skill\ndescription: Costs money.\n---\n# Paid\n' }];
    expect((await publishJson(d, creator.key, { version: '1.0.0', price: 2 }, files)).status).toBe(200);
  });

  test('without a terminal and without --yes: exit 2, nothing charged, nothing written', async () => {
    const before = await balance(buyer.key);
    const r = await env.run(['skill', 'install', PAID], inProject());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error CONFIRMATION_REQUIRED: paid-skill costs \$2\.00 .*nothing was charged\nhint: .*--yes/);
    expect(await balance(buyer.key)).toBe(before);
    expect(existsSync(join(project, '.agents', 'skills', PAID))).toBe(false);
    const json2 = await env.run(['skill', 'install', PAID, '--json'], inProject());
    expect(json2.code).toBe(2);
    expect(await balance(buyer.key)).toBe(before);
  });

  test('on a terminal it shows price and wallet and asks; "n" charges nothing, "y" pays once', async () => {
    const before = await balance(buyer.key);
    const no = await onTerminal(['skill', 'install', PAID], 'n', { AGW_API_KEY: buyer.key, HOME: home });
    expect(no.out).toContain('paid-skill 1.0.0 costs $2.00, charged once to your wallet.');
    expect(no.out).toMatch(/your wallet: \$10(\.00)? balance/);
    expect(no.out).toContain('cancelled; nothing was charged');
    expect(no.code).toBe(1);
    expect(await balance(buyer.key)).toBe(before);
    expect(existsSync(join(project, '.agents', 'skills', PAID))).toBe(false);

    const yes = await onTerminal(['skill', 'install', PAID], 'y', { AGW_API_KEY: buyer.key, HOME: home });
    expect(yes.code, yes.out).toBe(0);
    expect(yes.out).toContain('installed paid-skill 1.0.0 into .agents/skills/paid-skill (1 files, charged $2.00)');
    expect(yes.out).toContain('agents load it from .agents/skills/paid-skill/SKILL.md');
    expect(await balance(buyer.key)).toBeCloseTo(before - 2, 9);
  });

  test('--yes pays without asking; a skill already bought installs again without a question and for free', async () => {
    const other = await d.user({ tier: 'free', balance: 5 });
    const dir = join(env.dir, 'yes-project');
    mkdirSync(dir);
    const r = await env.run(['skill', 'install', PAID, '--yes', '--json'], { env: { AGW_API_KEY: other.key, HOME: home }, cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ charged: 2, alreadyInstalled: false });
    expect(await balance(other.key)).toBeCloseTo(3, 9);
    const again = await env.run(['skill', 'install', PAID, '--for', 'claude', '--json'], { env: { AGW_API_KEY: other.key, HOME: home }, cwd: dir });
    expect(again.code, again.stderr).toBe(0);
    expect(json(again)).toMatchObject({ charged: 0, alreadyInstalled: true });
    expect(await balance(other.key)).toBeCloseTo(3, 9);
  });

  test('a --version that does not exist is refused before anything is charged', async () => {
    const other = await d.user({ tier: 'free', balance: 5 });
    const r = await env.run(['skill', 'install', PAID, '--version', '9.9.9', '--yes'], { env: { AGW_API_KEY: other.key, HOME: home }, cwd: project });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('error VERSION_NOT_FOUND');
    expect(await balance(other.key)).toBe(5);
  });
});
