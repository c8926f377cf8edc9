import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { bundleDigest } from '../../src/shared/bundle/digest.js';
import { fileHeader } from '../../src/daemon/marketplace/bundle-tar.js';
import { readTarGz } from '../../src/cli/commands/skill/extract.js';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { runOnTerminal } from '../helpers/cli.js';
import { publishJson, skillMd, type FileSpec } from '../api/skills-helpers.js';
import { cliEnv, json, type CliEnv } from './cli-env.js';

/**
 * The CLI side of a marketplace people can trust: `agw skill install` checks the version's
 * signed digest before it writes a file (a tampered download is refused), records the digest
 * in the lockfile (`--frozen` refuses another one, naming both), asks about scan findings
 * as it asks about money, installs where each agent reads (Codex: .agents/skills; Goose
 * globally: $XDG_CONFIG_HOME/goose/skills), and `agw skill verify` checks installed copies.
 */
let d: TestDaemon;
let creator: TestUser;
let buyer: TestUser;
let env: CliEnv;
let home: string;
let project: string;

const TRUSTY: FileSpec[] = [
  { path: 'SKILL.md', content: skillMd('trusty', 'Formats dates for reports.', '# Dates\n\nUse ISO 8601.\n') },
  { path: 'scripts/fmt.sh', content: '#!/bin/sh\ndate -u +%Y-%m-%d\n' },
];
const WARNED: FileSpec[] = [
  { path: 'SKILL.md', content: skillMd('warned', 'Ships a template.', '# Template\n\nFill in the blanks.\n') },
  { path: 'references/NOTES.md', content: '# Notes\n\nA hidden r\u200Bm here.\n' },
  { path: 'assets/template.zip', content: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0]) },
];

const asBuyer = (extra: Record<string, string> = {}) => ({ env: { AGW_API_KEY: buyer.key, HOME: home, XDG_CONFIG_HOME: '', ...extra }, cwd: project });
const lockOf = (root: string) => JSON.parse(readFileSync(join(root, '.agents', 'skills.lock.json'), 'utf8'));
const apiJson = async (path: string, key?: string) => (await d.fetch(path, { key })).json() as Promise<any>;
const skillId = async (slug: string) => (await apiJson(`/skills/by-slug/${slug}`)).id as number;

beforeAll(async () => {
  d = await startTestDaemon();
  creator = await d.user({ tier: 'pro' });
  buyer = await d.user({ tier: 'free', balance: 10 });
  env = cliEnv({ AGW_BASE_URL: d.url });
  home = join(env.dir, 'home');
  project = join(env.dir, 'project');
  mkdirSync(home);
  mkdirSync(project);
  for (const [files, fields] of [[TRUSTY, {}], [WARNED, {}], [[{ path: 'SKILL.md', content: skillMd('pinned') }], {}]] as const) {
    expect((await publishJson(d, creator.key, { version: '1.0.0', ...fields }, [...files])).status).toBe(200);
  }
});
afterAll(async () => {
  env?.cleanup();
  await d?.close();
});

describe('install checks what the store signed, and verify checks it again later', () => {
  test('the digest is checked and recorded; verify says ok for SLUG, SLUG@VERSION, ./DIR and a copy no lockfile knows', async () => {
    const id = await skillId('trusty');
    const seal = await apiJson(`/skills/${id}/versions/1.0.0/scan`);
    const r = await env.run(['skill', 'install', 'trusty', '--json'], asBuyer());
    expect(r.code, r.stderr).toBe(0);
    expect(json(r)).toMatchObject({ version: '1.0.0', verified: 'signature', digest: seal.digest, signature: seal.signature, findings: [] });
    expect(seal.digest).toBe(bundleDigest(TRUSTY.map((f) => ({ path: f.path, content: Buffer.from(f.content) }))));
    expect(lockOf(project).skills[0]).toMatchObject({ slug: 'trusty', digest: seal.digest });

    const ok = await env.run(['skill', 'verify', 'trusty'], asBuyer());
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(`ok trusty 1.0.0 .agents/skills/trusty: ${seal.digest}, signed by ${seal.signature.kid}\n`);
    const pinned = json<{ ok: boolean; items: unknown[] }>(await env.run(['skill', 'verify', 'trusty@1.0.0', '--json'], asBuyer()));
    expect(pinned).toEqual({
      ok: true,
      items: [{ slug: 'trusty', version: '1.0.0', dir: join(project, '.agents', 'skills', 'trusty'), digest: seal.digest, expected: seal.digest, signature: { kid: seal.signature.kid, check: 'valid' }, ok: true, changes: [] }],
    });
    expect((await env.run(['skill', 'verify', './.agents/skills/trusty'], asBuyer())).code).toBe(0);
    cpSync(join(project, '.agents', 'skills', 'trusty'), join(project, 'elsewhere', 'trusty'), { recursive: true });
    const copy = json<{ items: { version: string; ok: boolean }[] }>(await env.run(['skill', 'verify', './elsewhere/trusty', '--json'], asBuyer()));
    expect(copy.items).toEqual([expect.objectContaining({ slug: 'trusty', version: '1.0.0', ok: true })]);

    writeFileSync(join(project, '.agents', 'skills', 'trusty', 'scripts', 'fmt.sh'), '#!/bin/sh\ncurl -s https://example.com/x\n');
    const bad = await env.run(['skill', 'verify', 'trusty'], asBuyer());
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/^FAILED trusty 1\.0\.0 \.agents\/skills\/trusty: digest sha256:[0-9a-f]{64} is not the signed sha256:[0-9a-f]{64}; scripts\/fmt\.sh: changed\n$/);
    writeFileSync(join(project, 'elsewhere', 'trusty', 'extra.md'), 'x');
    const unknown = json<{ ok: boolean; items: { version: string | null; changes: string[] }[] }>(await env.run(['skill', 'verify', './elsewhere/trusty', '--json'], asBuyer()));
    expect(unknown.ok).toBe(false);
    expect(unknown.items[0]).toMatchObject({ version: null, changes: ['no version of the skill has these files'] });
    expect((await env.run(['skill', 'install', 'trusty', '--force'], asBuyer())).code).toBe(0);
  });

  test('a skill installed nowhere here is downloaded and checked (owners and buyers)', async () => {
    const r = await env.run(['skill', 'verify', 'warned@1.0.0'], { env: { AGW_API_KEY: creator.key, HOME: home }, cwd: join(env.dir) });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ok warned 1\.0\.0 \(downloaded\): sha256:[0-9a-f]{64}, signed by /);
  });
});

/** A loopback proxy in front of the daemon that can tamper with bundles and with scan answers. */
async function tamperingProxy(mode: { bundle: boolean; scan: boolean }): Promise<{ url: string; close: () => Promise<void> }> {
  const extra = { path: 'scripts/evil.sh', content: Buffer.from('#!/bin/sh\necho pwned\n') };
  let tampered: { path: string; content: Buffer }[] = [];
  const server: Server = createServer(async (req, res) => {
    const upstream = await fetch(`${d.url}${req.url}`, { method: req.method, headers: { authorization: req.headers.authorization ?? '', accept: req.headers.accept ?? '*/*' } });
    let body = Buffer.from(await upstream.arrayBuffer());
    if (mode.bundle && upstream.ok && req.url?.endsWith('/bundle')) {
      const files = (await readTarGz(body)).map((f) => ({ path: f.path, content: f.content }));
      tampered = [...files, extra];
      const blocks = tampered.flatMap((f) => {
        const sha = createHash('sha256').update(f.content).digest('hex');
        return [fileHeader(f.path, f.content.length, new Date(0), sha), f.content, Buffer.alloc((512 - (f.content.length % 512)) % 512)];
      });
      body = gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
    }
    if (mode.scan && upstream.ok && req.url?.endsWith('/scan')) {
      // the digest the tampered bundle will have (the proxy knows it: it makes the bundle)
      const files = TRUSTY.map((f) => ({ path: f.path, content: Buffer.from(f.content) }));
      body = Buffer.from(JSON.stringify({ ...JSON.parse(body.toString()), digest: bundleDigest([...files, extra]) }));
    }
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe('a tampered download is refused before a file is written', () => {
  test('a file slipped into the bundle (its own sha256 declared) fails the digest; a digest swapped to match fails the signature', async () => {
    const lockBefore = readFileSync(join(project, '.agents', 'skills.lock.json'), 'utf8');
    for (const [mode, code, what] of [
      [{ bundle: true, scan: false }, 'DIGEST_MISMATCH', /the downloaded files have digest sha256:[0-9a-f]{64} but the version's is sha256:[0-9a-f]{64}; nothing was written/],
      [{ bundle: true, scan: true }, 'SIGNATURE_INVALID', /digest sha256:[0-9a-f]{64} carries a signature that does not verify with key \S+; nothing was written/],
    ] as const) {
      const proxy = await tamperingProxy(mode);
      try {
        const r = await env.run(['skill', 'install', 'trusty', '--for', 'claude'], asBuyer({ AGW_BASE_URL: proxy.url }));
        expect(r.code, r.stderr).toBe(1);
        expect(r.stderr).toContain(`error ${code}: trusty 1.0.0: `);
        expect(r.stderr).toMatch(what);
      } finally {
        await proxy.close();
      }
      expect(existsSync(join(project, '.claude'))).toBe(false);
      expect(readFileSync(join(project, '.agents', 'skills.lock.json'), 'utf8')).toBe(lockBefore);
    }
  });
});

describe('install --frozen', () => {
  test('refuses a version overwritten with other bytes, naming the lockfile\'s digest and the new one, and writes nothing', async () => {
    const ci = join(env.dir, 'ci');
    mkdirSync(ci);
    const r = await env.run(['skill', 'install', 'pinned', '--json'], { ...asBuyer(), cwd: ci });
    expect(r.code, r.stderr).toBe(0);
    const before = json<{ digest: string }>(r).digest;
    expect((await publishJson(d, creator.key, { version: '1.0.0', overwrite: true }, [{ path: 'SKILL.md', content: skillMd('pinned', 'Now different.') }])).status).toBe(200);
    const after = (await apiJson(`/skills/${await skillId('pinned')}/versions/1.0.0/scan`)).digest;
    expect(after).not.toBe(before);
    const fresh = join(env.dir, 'ci-fresh');
    mkdirSync(join(fresh, '.agents'), { recursive: true });
    cpSync(join(ci, '.agents', 'skills.lock.json'), join(fresh, '.agents', 'skills.lock.json'));
    const frozen = await env.run(['skill', 'install', '--frozen'], { ...asBuyer(), cwd: fresh });
    expect(frozen.code).toBe(1);
    expect(frozen.stderr).toContain(`error LOCKFILE_MISMATCH: pinned 1.0.0 is ${after} in the marketplace but the lockfile has ${before}; nothing was written`);
    expect(existsSync(join(fresh, '.agents', 'skills'))).toBe(false);
  });
});

/** The CLI on a pseudo-terminal in the project, signed in to the test daemon, typing `answer` at its [y/N] question. */
const onTerminal = (args: string[], answer: string, extraEnv: Record<string, string>) =>
  runOnTerminal(args, answer, { cwd: project, env: { AGW_CONFIG_DIR: env.configDir, AGW_NO_KEYRING: '1', AGW_BASE_URL: d.url, ...extraEnv } });

describe('scan findings are asked about, as money is', () => {
  test('without a terminal and without --yes: exit 2, listed, nothing written; --yes installs and lists them', async () => {
    const r = await env.run(['skill', 'install', 'warned'], asBuyer());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error CONFIRMATION_REQUIRED: warned 1\.0\.0: the marketplace's scan reported 2 findings and there is no terminal to ask on; nothing was installed or charged:\n/);
    expect(r.stderr).toContain('  assets/template.zip: warning ARCHIVE_FILE: an archive whose contents are not scanned: the file is a zip archive\n');
    expect(r.stderr).toContain('  references/NOTES.md:3: warning ZERO_WIDTH: ');
    expect(r.stderr).toContain('hint: ');
    expect(existsSync(join(project, '.agents', 'skills', 'warned'))).toBe(false);

    const yes = await env.run(['skill', 'install', 'warned', '--yes', '--json'], asBuyer());
    expect(yes.code, yes.stderr).toBe(0);
    expect(json<{ findings: { rule: string }[] }>(yes).findings.map((f) => f.rule)).toEqual(['ARCHIVE_FILE', 'ZERO_WIDTH']);
    expect(yes.stderr).toContain('the marketplace\'s scan reported 2 findings (accepted with --yes):');
    expect(existsSync(join(project, '.agents', 'skills', 'warned', 'SKILL.md'))).toBe(true);
  });

  test('on a terminal it lists them and asks; "n" writes nothing, "y" installs', async () => {
    const no = await onTerminal(['skill', 'install', 'warned', '--for', 'cursor'], 'n', { AGW_API_KEY: buyer.key, HOME: home });
    expect(no.out).toContain('warned 1.0.0: the marketplace\'s scan reported 2 findings:');
    expect(no.out).toContain('references/NOTES.md:3: warning ZERO_WIDTH');
    expect(no.out).toContain('Install it anyway? [y/N]');
    expect(no.out).toContain('cancelled; nothing was installed or charged');
    expect(no.code).toBe(1);
    expect(existsSync(join(project, '.cursor'))).toBe(false);
    const yes = await onTerminal(['skill', 'install', 'warned', '--for', 'cursor'], 'y', { AGW_API_KEY: buyer.key, HOME: home });
    expect(yes.code, yes.out).toBe(0);
    expect(existsSync(join(project, '.cursor', 'skills', 'warned', 'SKILL.md'))).toBe(true);
  });
});

describe('agent folders as the agents read them', () => {
  test('--for codex installs into .agents/skills (Codex reads it); --global --for goose into $XDG_CONFIG_HOME/goose/skills, else ~/.config/goose/skills', async () => {
    const codex = await env.run(['skill', 'install', 'trusty', '--for', 'codex', '--json'], asBuyer());
    expect(codex.code, codex.stderr).toBe(0);
    expect(json(codex)).toMatchObject({ target: 'codex', dir: join(project, '.agents', 'skills', 'trusty') });
    expect(lockOf(project).skills.filter((e: { dir: string }) => e.dir === '.agents/skills/trusty')).toHaveLength(1);

    const xdg = join(env.dir, 'xdg');
    const g1 = await env.run(['skill', 'install', 'trusty', '--global', '--for', 'goose', '--json'], asBuyer({ XDG_CONFIG_HOME: xdg }));
    expect(g1.code, g1.stderr).toBe(0);
    expect(json(g1)).toMatchObject({ dir: join(xdg, 'goose', 'skills', 'trusty') });
    expect(existsSync(join(xdg, 'goose', 'skills', 'trusty', 'SKILL.md'))).toBe(true);
    const g2 = await env.run(['skill', 'install', 'trusty', '--global', '--for', 'goose', '--json'], asBuyer());
    expect(json(g2)).toMatchObject({ dir: join(home, '.config', 'goose', 'skills', 'trusty') });
    expect(lockOf(home).skills.map((e: { dir: string }) => e.dir).sort()).toEqual([join(xdg, 'goose', 'skills', 'trusty'), '.config/goose/skills/trusty'].sort());
    const claude = await env.run(['skill', 'install', 'trusty', '--global', '--for', 'claude', '--json'], asBuyer());
    expect(json(claude)).toMatchObject({ dir: join(home, '.claude', 'skills', 'trusty') });

    // --dir is the user's choice; a folder not named after the skill is said
    const other = await env.run(['skill', 'install', 'trusty', '--dir', 'vendor/dates'], asBuyer());
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toBe('warning NAME_DIRECTORY_MISMATCH: vendor/dates is not named after the skill "trusty"; agents that follow the Agent Skills specification expect the folder to be named so\n');
  });
});
