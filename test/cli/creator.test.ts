import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readBundleDir, validateBundle } from '../../src/shared/bundle/index.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { ANSI, cliEnv, json, type CliEnv } from './cli-env.js';

/** The creator's path through the real CLI and a real daemon: init → publish → install. */
let d: TestDaemon;
let creator: TestUser;
let buyer: TestUser;
let env: CliEnv;
let bundleDir: string;
let id: number;

beforeAll(async () => {
  d = await startTestDaemon();
  creator = await d.user({ tier: 'pro' });
  buyer = await d.user({ tier: 'free', balance: 10 }); // no allowance: a charge comes off the balance
  env = cliEnv({ AGW_BASE_URL: d.url, NO_COLOR: undefined });
  const login = await env.run(['login', '--with-token'], { input: creator.key });
  if (login.code !== 0) throw new Error(login.stderr);
  bundleDir = join(env.dir, 'tiny-tool');
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

const api = async (path: string, key?: string) => {
  const r = await d.fetch(path, { key });
  expect(r.status, path).toBe(200);
  return r.json();
};
const asBuyer = () => ({ env: { AGW_API_KEY: buyer.key } });
const balance = async (key: string) => ((await api('/wallet', key)) as { balance: number }).balance;

describe('the creator path', () => {
  test('init, validate, pack, publish, versions, notes, install into a folder with the same files', { timeout: 90_000 }, async () => {
    expect((await env.run(['skill', 'init', 'tiny-tool'])).code).toBe(0);
    // the template's placeholder description is refused by publish: the creator writes a real one
    const placeholder = await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.0.0']);
    expect(placeholder.code).toBe(1);
    expect(placeholder.stderr).toContain('tiny-tool/SKILL.md:3:1: warning PLACEHOLDER_DESCRIPTION');
    expect(placeholder.stderr).toMatch(/error PLACEHOLDER_DESCRIPTION: .+\nhint: /);
    const md = join(bundleDir, 'SKILL.md');
    writeFileSync(md, readFileSync(md, 'utf8').replace(/^description: .*$/m, 'description: Echoes a tiny message. Use it to test the marketplace.'));
    writeFileSync(join(bundleDir, 'scripts', 'run.sh'), '#!/bin/sh\necho tiny\n');
    chmodSync(join(bundleDir, 'scripts', 'run.sh'), 0o755);
    writeFileSync(join(bundleDir, 'assets', 'data.bin'), Buffer.from([0, 1, 2, 250, 251, 252, 255]));
    mkdirSync(join(bundleDir, 'node_modules', 'x'), { recursive: true });
    writeFileSync(join(bundleDir, 'node_modules', 'x', 'big.js'), 'not published');

    expect((await env.run(['skill', 'validate', 'tiny-tool'])).code).toBe(0);
    expect((await env.run(['skill', 'pack', 'tiny-tool'])).code).toBe(0);

    const pub = await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.0.0', '--price', '2', '--category', 'other', '--notes', 'First release', '--json']);
    expect(pub.stderr).toBe('');
    expect(pub.code).toBe(0);
    const result = json<{ id: number; version: string }>(pub);
    expect(result).toEqual({ id: expect.any(Number), version: '1.0.0' });
    id = result.id;

    const dup = await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.0.0']);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^error VERSION_EXISTS: .+\nhint: .*--overwrite/);
    const over = await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.0.0', '--overwrite', '--notes', 'First release']);
    expect(over.code).toBe(0);
    expect(over.stdout).toBe(`published tiny-tool 1.0.0 (id ${id})\n`);

    writeFileSync(join(env.dir, 'CHANGES.md'), 'Adds data.bin\n');
    expect((await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.1.0', '--notes-file', 'CHANGES.md'])).code).toBe(0);

    const versions = await env.run(['skill', 'versions', 'tiny-tool', '--json']);
    expect(json(versions)).toEqual(await api(`/skills/${id}/public-versions`));
    const human = await env.run(['skill', 'versions', 'tiny-tool']);
    expect(human.stdout).toMatch(/^tiny-tool \(id \d+\), current 1\.1\.0\nVERSION\tPUBLISHED\tINSTALLS\tNOTES\n1\.1\.0 \*\t/);
    expect(human.stdout).not.toMatch(ANSI);

    expect((await env.run(['skill', 'notes', 'tiny-tool', '1.0.0', '--set', 'Better notes'])).code).toBe(0);
    expect((await env.run(['skill', 'notes', String(id), '1.0.0'])).stdout).toBe('Better notes\n');
    expect((await env.run(['skill', 'notes', 'tiny-tool', '1.1.0'])).stdout).toBe('Adds data.bin\n');
    const edited = json<{ versions: { version: string; notes: string; notesUpdatedAt: string | null; notesUpdatedByName: string | null }[] }>(
      await env.run(['skill', 'versions', 'tiny-tool', '--json']),
    ).versions.find((v) => v.version === '1.0.0');
    expect(edited).toMatchObject({ notes: 'Better notes', notesUpdatedAt: expect.any(String), notesUpdatedByName: expect.any(String) });

    // the buyer installs it: charged once, the files are exactly the bundle's
    const before = await balance(buyer.key);
    const target = join(env.dir, 'installed', 'tiny');
    const inst = await env.run(['skill', 'install', 'tiny-tool', '--dir', target, '--yes', '--json'], asBuyer());
    expect(inst.code).toBe(0);
    // the file list is owner-only, so a buyer checks every file against the sha256 the bundle declares, and the whole against the signed digest
    expect(inst.stderr).toBe(`warning NAME_DIRECTORY_MISMATCH: installed/tiny is not named after the skill "tiny-tool"; agents that follow the Agent Skills specification expect the folder to be named so\n`);
    expect(json(inst)).toMatchObject({ skillId: id, slug: 'tiny-tool', version: '1.1.0', charged: 2, alreadyInstalled: false, dir: target, verified: 'signature' });
    expect(await balance(buyer.key)).toBeCloseTo(before - 2, 9);
    const source = (await readBundleDir(bundleDir)).filter((e) => e.kind === 'file');
    const installed = (await readBundleDir(target)).filter((e) => e.kind === 'file');
    expect(installed.map((e) => e.path)).toEqual(source.map((e) => e.path));
    expect(installed.map((e) => e.path)).not.toContain('node_modules/x/big.js');
    for (const [i, e] of installed.entries()) expect(e.content!.equals(source[i].content!), e.path).toBe(true);

    // a folder changed since the install is not touched (and nothing is charged); --force replaces it for free
    writeFileSync(join(target, 'SKILL.md'), 'local edit');
    const again = await env.run(['skill', 'install', 'tiny-tool', '--dir', target], asBuyer());
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error DIR_MODIFIED');
    expect(readFileSync(join(target, 'SKILL.md'), 'utf8')).toBe('local edit');
    const forced = await env.run(['skill', 'install', 'tiny-tool', '--dir', target, '--force', '--json'], asBuyer());
    expect(json(forced)).toMatchObject({ charged: 0, alreadyInstalled: true });
    expect(readFileSync(join(target, 'SKILL.md')).equals(source.find((e) => e.path === 'SKILL.md')!.content!)).toBe(true);
    expect(await balance(buyer.key)).toBeCloseTo(before - 2, 9);

    // by default into ./.agents/skills/<name>, where agents read it
    const cwd = join(env.dir, 'project');
    mkdirSync(cwd);
    const def = await env.run(['skill', 'install', String(id)], { ...asBuyer(), cwd });
    expect(def.code).toBe(0);
    expect(def.stdout).toMatch(/^installed tiny-tool 1\.1\.0 into \.agents\/skills\/tiny-tool \(\d+ files, already owned\)\n$/);
    expect(readFileSync(join(cwd, '.agents', 'skills', 'tiny-tool', 'assets', 'data.bin'))).toEqual(Buffer.from([0, 1, 2, 250, 251, 252, 255]));
    // what an agent loads: .agents/skills/<name>/SKILL.md, valid by the Agent Skills rules, folder named after the skill
    const loaded = validateBundle(await readBundleDir(join(cwd, '.agents', 'skills', 'tiny-tool')), { dirName: 'tiny-tool' });
    expect({ ok: loaded.ok, warnings: loaded.warnings, name: loaded.meta?.name }).toEqual({ ok: true, warnings: [], name: 'tiny-tool' });
  });

  test('the owner’s install checks every file’s sha256; a tampered file fails and nothing is written', async () => {
    const ok = await env.run(['skill', 'install', 'tiny-tool', '--dir', join('own', 'tiny-tool'), '--json']);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    const listed = (await api(`/skills/${id}/versions/1.1.0/files`, creator.key)) as { files: { path: string; sha256: string }[] };
    expect(json(ok)).toMatchObject({ verified: 'signature', files: listed.files });

    const skillMd = listed.files.find((f) => f.path === 'SKILL.md')!;
    await d.daemon.ctx.db.run('UPDATE blobs SET data = ? WHERE sha256 = ?', [Buffer.from('---\nname: tiny-tool\ndescription: evil\n---\n'), skillMd.sha256]);
    const bad = await env.run(['skill', 'install', 'tiny-tool', '--dir', join('tampered', 'tiny')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error CHECKSUM_MISMATCH: .*SKILL\.md: sha256 mismatch/);
    expect(existsSync(join(env.dir, 'tampered', 'tiny'))).toBe(false);
    expect(existsSync(join(env.dir, 'tampered')) ? readdirSync(join(env.dir, 'tampered')) : []).toEqual([]);
    // a buyer (who cannot read the file list) catches it too, from the digests in the archive
    const buyerBad = await env.run(['skill', 'install', 'tiny-tool', '--dir', join('tampered', 'buyer'), '--force'], asBuyer());
    expect(buyerBad.code).toBe(1);
    expect(buyerBad.stderr).toMatch(/^error CHECKSUM_MISMATCH: .*SKILL\.md: sha256 mismatch/);
    expect(existsSync(join(env.dir, 'tampered', 'buyer'))).toBe(false);
    await d.daemon.ctx.db.run('UPDATE blobs SET data = ? WHERE sha256 = ?', [readFileSync(join(bundleDir, 'SKILL.md')), skillMd.sha256]);
  });

  test('search, info, mine and stats print the API answer with --json', async () => {
    expect(json(await env.run(['skill', 'search', 'tiny', '--json']))).toEqual(await api('/skills?q=tiny'));
    expect(json(await env.run(['skill', 'info', 'tiny-tool', '--json']))).toEqual(await api(`/skills/${id}`));
    expect(json(await env.run(['skill', 'mine', '--json']))).toEqual(await api('/skills/mine', creator.key));
    expect(json(await env.run(['skill', 'stats', '--days', '7', '--json']))).toEqual(await api('/skills/mine/timeseries?days=7', creator.key));
    const mine = await env.run(['skill', 'mine']);
    expect(mine.stdout).toMatch(/^ID\tSLUG\tSTATUS\tVERSION\tPRICE\tINSTALLS\tREVENUE\n\d+\ttiny-tool\tpublished\t1\.1\.0\t\$2\.00\t\d+\t\$1\.60\n$/); // 80% of one $2 sale
    const stats = await env.run(['skill', 'stats', '--days', '7']);
    expect(stats.stdout.trim().split('\n')).toHaveLength(1 + 7 + 1);
    expect(stats.stdout).not.toMatch(ANSI);
  });

  test('status archives and publishes; a draft version is published by republish', async () => {
    expect((await env.run(['skill', 'status', 'tiny-tool', 'archive'])).stdout).toBe('tiny-tool is now archived\n');
    expect(json<{ total: number }>(await env.run(['skill', 'search', 'tiny', '--json'])).total).toBe(0);
    expect((await env.run(['skill', 'status', 'tiny-tool', 'publish'])).code).toBe(0);
    expect(json<{ total: number }>(await env.run(['skill', 'search', 'tiny', '--json'])).total).toBe(1);
    expect((await env.run(['skill', 'status', 'tiny-tool', 'deleted'])).code).toBe(2);

    expect((await env.run(['skill', 'publish', 'tiny-tool', '--version', '2.0.0', '--draft'])).code).toBe(0);
    type Owner = { versions: { version: string; status: string }[] };
    const status = async () => json<Owner>(await env.run(['skill', 'versions', 'tiny-tool', '--all', '--json'])).versions.find((v) => v.version === '2.0.0')?.status;
    expect(await status()).toBe('draft');
    expect((await env.run(['skill', 'republish', 'tiny-tool', '2.0.0'])).code).toBe(0);
    expect(await status()).toBe('published');
  });
});

describe('publish checks before uploading', () => {
  test('a version that is not SemVer is a usage error naming the SemVer one, unless --allow-non-semver', async () => {
    const before = await api(`/skills/${id}/versions`, creator.key);
    const r = await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --version 1\.1 is not SemVer .*\nhint: use --version 1\.1\.0, or pass --allow-non-semver/);
    expect((await env.run(['skill', 'publish', 'tiny-tool', '--version', 'v2.0.0'])).code).toBe(2);
    expect((await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.1', '--allow-non-semver', '--dry-run'])).code).toBe(0);
    expect(await api(`/skills/${id}/versions`, creator.key)).toEqual(before);
  });

  test('an unknown category is refused before the upload with the daemon’s list, which --help shows too', async () => {
    const r = await env.run(['skill', 'publish', 'tiny-tool', '--version', '7.0.0', '--category', 'scenes']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: unknown category "scenes"; the categories are: coding, data, writing, research, productivity, .*, scene, npc-dialogue, .*, other\n/);
    const help = await env.run(['skill', 'publish', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      'by default: coding, data, writing, research, productivity, design, devops, scene, npc-dialogue, audio-economy, story-terrain, generation-files, physics-camera, validation-registry, other',
    );
    expect((await api(`/skills/${id}/versions`, creator.key)).versions.some((v: { version: string }) => v.version === '7.0.0')).toBe(false);
  });

  test('a general category such as productivity is accepted by the precheck and the daemon (issue #33: it exited 2)', async () => {
    const dir = join(env.dir, 'tidy-notes');
    expect((await env.run(['skill', 'init', 'tidy-notes'])).code).toBe(0);
    const md = join(dir, 'SKILL.md');
    writeFileSync(md, readFileSync(md, 'utf8').replace(/^description: .*$/m, 'description: Tidies meeting notes. Use it after a meeting.'));
    const r = await env.run(['skill', 'publish', 'tidy-notes', '--version', '1.0.0', '--category', 'productivity', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect((await api(`/skills/${json<{ id: number }>(r).id}`)).category).toBe('productivity');
  });

  test('an existing version is refused before the upload; a front-matter typo is reported with a did-you-mean', async () => {
    const md = join(bundleDir, 'SKILL.md');
    const original = readFileSync(md, 'utf8');
    writeFileSync(md, original.replace('description:', 'licence: MIT\ndescription:'));
    try {
      const r = await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.0.0']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('tiny-tool/SKILL.md:3:1: warning UNKNOWN_FIELD: unknown front-matter field "licence"; did you mean "license"?');
      expect(r.stderr).toMatch(/error VERSION_EXISTS: version 1\.0\.0 of "tiny-tool" already exists \(published\); nothing was uploaded\nhint: .*--overwrite/);
    } finally {
      writeFileSync(md, original);
    }
  });
});

describe('publish checks', () => {
  test('a dry run validates and lists the files but sends nothing', async () => {
    const before = await api('/skills/mine', creator.key);
    const r = await env.run(['skill', 'publish', 'tiny-tool', '--version', '9.9.9', '--dry-run', '--json']);
    expect(r.code).toBe(0);
    const dry = json<{ dryRun: boolean; fields: { slug: string; version: string }; files: { path: string }[] }>(r);
    expect(dry.fields).toMatchObject({ slug: 'tiny-tool', version: '9.9.9' });
    expect(dry.files.map((f) => f.path)).toContain('assets/data.bin');
    expect(await api('/skills/mine', creator.key)).toEqual(before);
  });

  test('an invalid bundle is refused locally (exit 1) with every problem; bad flags are usage errors', async () => {
    const bad = join(env.dir, 'bad-skill');
    mkdirSync(bad);
    writeFileSync(join(bad, 'SKILL.md'), '---\nname: Bad\n---\n');
    const r = await env.run(['skill', 'publish', 'bad-skill', '--version', '1.0.0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('bad-skill/SKILL.md:2:1: INVALID_NAME');
    expect(r.stderr).toContain('bad-skill/SKILL.md:1:1: MISSING_DESCRIPTION');
    expect(r.stderr).toContain('error INVALID_BUNDLE');
    expect((await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.0.0', '--price', '-3'])).code).toBe(2);
    expect((await env.run(['skill', 'publish', 'tiny-tool', '--version', '1.0.0', '--notes', 'a', '--notes-file', 'b'])).code).toBe(2);
  });

  test('another creator cannot take the slug or edit the notes (403 with a hint)', async () => {
    const taken = await env.run(['skill', 'publish', 'tiny-tool', '--version', '5.0.0'], asBuyer());
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^error SLUG_TAKEN: .+\nhint: /);
    const notes = await env.run(['skill', 'notes', 'tiny-tool', '1.0.0', '--set', 'mine now'], asBuyer());
    expect(notes.code).toBe(1);
    expect(notes.stderr).toContain('error NOT_OWNER');
  });
});

describe('pack, then publish from the skill folder (issue #33: the .tgz was shipped)', () => {
  test('publish after pack ships exactly the bundle’s files; an install for Claude gets no NAME.tgz, .agwignore or .gitkeep', async () => {
    const dir = join(env.dir, 'packed-skill');
    expect((await env.run(['skill', 'init', 'packed-skill'])).code).toBe(0);
    const md = join(dir, 'SKILL.md');
    writeFileSync(md, readFileSync(md, 'utf8').replace(/^description: .*$/m, 'description: Shows that pack output stays home. Use it in tests.'));
    expect((await env.run(['skill', 'pack'], { cwd: dir })).code).toBe(0);
    expect(existsSync(join(dir, 'packed-skill.tgz'))).toBe(true);
    const bundleFiles = ['README.md', 'SKILL.md', 'scripts/README.md', 'tools/example.json'];

    const pub = await env.run(['skill', 'publish', '--version', '1.0.0', '--json'], { cwd: dir });
    expect(pub.code).toBe(0);
    const pid = json<{ id: number }>(pub).id;
    const listed = (await api(`/skills/${pid}/versions/1.0.0/files`, creator.key)) as { files: { path: string }[] };
    expect(listed.files.map((f) => f.path)).toEqual(bundleFiles);

    const project = join(env.dir, 'claude-project');
    mkdirSync(project);
    const inst = await env.run(['skill', 'install', 'packed-skill', '--for', 'claude'], { ...asBuyer(), cwd: project });
    expect(inst.code).toBe(0);
    // every file on disk, not through readBundleDir (which leaves agw's own files out)
    const installed = join(project, '.claude', 'skills', 'packed-skill');
    const onDisk = readdirSync(installed, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath ?? e.path, e.name).slice(installed.length + 1))
      .sort();
    expect(onDisk).toEqual(bundleFiles);
  });
});

