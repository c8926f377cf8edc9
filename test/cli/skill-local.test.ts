import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { list } from 'tar';
import { readBundleDir, validateBundle } from '../../src/shared/bundle/index.js';
import { AGW_BIN } from '../helpers/cli.js';
import { ANSI, cliEnv, json, type CliEnv } from './cli-env.js';

/** The creator's local loop: init, validate, pack. No daemon involved. */
let env: CliEnv;
beforeAll(() => {
  env = cliEnv({ NO_COLOR: undefined });
});
afterAll(() => env.cleanup());

const write = (root: string, files: Record<string, string>) => {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), c);
  }
};

describe('agw skill init', () => {
  test('scaffolds the template with the name filled in, and the bundle validates as created', async () => {
    const r = await env.run(['skill', 'init', 'weather-report']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('created skill weather-report');
    expect(r.stdout).not.toMatch(ANSI);
    const dir = join(env.dir, 'weather-report');
    expect(readdirSync(dir).sort()).toEqual(['.agwignore', 'README.md', 'SKILL.md', 'assets', 'scripts', 'tools']);
    const skill = readFileSync(join(dir, 'SKILL.md'), 'utf8');
    expect(skill).toMatch(/^---\nname: weather-report\n/);
    expect(skill).not.toContain('{{name}}');

    // valid as created; the only remark is the placeholder description, a warning (exit 0)
    const v = await env.run(['skill', 'validate', 'weather-report', '--json']);
    expect(v.code).toBe(0);
    expect(json(v)).toEqual({
      dir, ok: true, name: 'weather-report', files: 4, problems: [], // .agwignore and assets/.gitkeep are agw's, never the skill's
      warnings: [{ path: 'SKILL.md', rule: 'PLACEHOLDER_DESCRIPTION', message: expect.any(String), line: 3, column: 1 }],
    });
    const text = await env.run(['skill', 'validate'], { cwd: dir });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^SKILL\.md:3:1: warning PLACEHOLDER_DESCRIPTION: .+\nvalid: weather-report \(4 files, 1 warning\)\n$/);
  });

  test('without NAME it uses the current folder; a bad name is a usage error (2); a non-empty folder fails (1)', async () => {
    const dir = join(env.dir, 'My Tool');
    mkdirSync(dir);
    const here = await env.run(['skill', 'init', '--json'], { cwd: dir });
    expect(here.code).toBe(0);
    expect(json<{ name: string }>(here).name).toBe('my-tool');

    const bad = await env.run(['skill', 'init', 'Bad_Name']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/must be lowercase/);
    expect(existsSync(join(env.dir, 'Bad_Name'))).toBe(false);

    const again = await env.run(['skill', 'init', 'weather-report']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('error DIR_NOT_EMPTY');
    expect(again.stderr).toContain('hint: ');
  });
});

describe('agw skill validate', () => {
  let bad: string;
  beforeAll(() => {
    bad = join(env.dir, 'broken');
    write(bad, {
      'SKILL.md': '---\nname: Broken_Skill\n---\nbody\n',
      'tools/a.json': JSON.stringify({ name: 'dup', description: 'a', parameters: { type: 'object' } }),
      'tools/b.json': JSON.stringify({ name: 'dup', description: 'b', parameters: { type: 'string' } }),
      'tools/c.json': '{ not json',
    });
  });

  const at = (p: { line?: number; column?: number }) => (p.line ? `:${p.line}:${p.column}` : '');

  test('prints every problem of the shared validator with file, line:column and rule, then the warnings, and exits 1', async () => {
    const { problems: expected, warnings } = validateBundle(await readBundleDir(bad), { dirName: 'broken' });
    expect(expected.length).toBeGreaterThanOrEqual(5);
    expect(warnings.map((w) => w.rule)).toEqual(['NAME_DIRECTORY_MISMATCH']);
    const r = await env.run(['skill', 'validate', 'broken']);
    expect(r.code).toBe(1);
    expect(r.stdout).not.toMatch(ANSI);
    const lines = r.stdout.trim().split('\n');
    expect(lines.slice(0, -1)).toEqual([
      ...expected.map((p) => `broken/${p.path}${at(p)}: ${p.rule}: ${p.message}`),
      ...warnings.map((p) => `broken/${p.path}${at(p)}: warning ${p.rule}: ${p.message}`),
    ]);
    expect(lines.at(-1)).toBe(`invalid: ${expected.length} problems, 1 warning`);
    for (const rule of ['INVALID_NAME', 'MISSING_DESCRIPTION', 'INVALID_TOOL_SCHEMA', 'DUPLICATE_TOOL_NAME', 'INVALID_TOOL_MANIFEST']) {
      expect(r.stdout).toContain(rule);
    }
    expect(r.stdout).toContain('broken/SKILL.md:2:1: INVALID_NAME');
    expect(r.stdout).toMatch(/broken\/tools\/c\.json:1:3: INVALID_TOOL_MANIFEST: not valid JSON: /);

    const j = await env.run(['skill', 'validate', bad, '--json']);
    expect(j.code).toBe(1);
    expect(json(j)).toEqual({ dir: bad, ok: false, name: null, files: 4, problems: expected, warnings });
  });

  test('--format github prints one ::error annotation per problem and a ::warning per warning, with line and col', async () => {
    const { problems: expected } = validateBundle(await readBundleDir(bad));
    const r = await env.run(['skill', 'validate', 'broken', '--format', 'github']);
    expect(r.code).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(expected.length + 1);
    expect(lines[0]).toMatch(/^::error file=broken\/SKILL\.md,line=\d+,col=\d+,title=[A-Z_]+::.+/);
    expect(lines.filter((l) => l.startsWith('::error file=broken/tools/b.json,title=DUPLICATE_TOOL_NAME::'))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/^::warning file=broken\/SKILL\.md,line=2,col=1,title=NAME_DIRECTORY_MISMATCH::/);
  });

  test('a typo in a front-matter key is reported as an unknown field with a did-you-mean, and does not fail', async () => {
    const dir = join(env.dir, 'typo-skill');
    write(dir, { 'SKILL.md': '---\nname: typo-skill\ndescription: Real words.\nlicence: MIT\n---\n# Body\n' });
    const r = await env.run(['skill', 'validate', 'typo-skill']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('typo-skill/SKILL.md:4:1: warning UNKNOWN_FIELD: unknown front-matter field "licence"; did you mean "license"?\nvalid: typo-skill (1 files, 1 warning)\n');
  });

  test('a missing folder or an unknown --format is a usage error (exit 2)', async () => {
    const missing = await env.run(['skill', 'validate', 'nope']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope is not a directory');
    const format = await env.run(['skill', 'validate', 'broken', '--format', 'xml']);
    expect(format.code).toBe(2);
  });
});

describe('agw skill pack', () => {
  test('two packs of the same tree are byte-identical; ignored files stay out; entries are sorted with fixed metadata', async () => {
    const dir = join(env.dir, 'packme');
    expect((await env.run(['skill', 'init', 'packme'])).code).toBe(0);
    write(dir, { '.git/config': 'x', 'node_modules/m/index.js': 'x', 'debug.log': 'x', '.env': 'SECRET=1', 'scripts/run.sh': 'echo hi\n' });
    const a = await env.run(['skill', 'pack', 'packme', '-o', 'a.tgz', '--json']);
    expect(a.code).toBe(0);
    utimesSync(join(dir, 'SKILL.md'), new Date('2021-05-05'), new Date('2021-05-05'));
    const b = await env.run(['skill', 'pack', 'packme', '-o', 'b.tgz']);
    expect(b.code).toBe(0);
    const bytesA = readFileSync(join(env.dir, 'a.tgz'));
    expect(bytesA.equals(readFileSync(join(env.dir, 'b.tgz')))).toBe(true);
    expect(json<{ bytes: number; files: number }>(a)).toMatchObject({ name: 'packme', bytes: bytesA.length, files: 5 });

    const entries: { path: string; mtime?: Date; uid?: number; uname?: string }[] = [];
    await list({ file: join(env.dir, 'a.tgz'), onReadEntry: (e) => entries.push({ path: e.path, mtime: e.mtime, uid: e.uid, uname: e.uname }) });
    const paths = entries.map((e) => e.path);
    expect(paths).toEqual(['README.md', 'SKILL.md', 'scripts/README.md', 'scripts/run.sh', 'tools/example.json']);
    for (const e of entries) {
      expect(e.mtime?.toISOString()).toBe('2000-01-01T00:00:00.000Z');
      expect(e.uname ?? '').toBe('');
    }
  });

  test('run in the skill folder it writes NAME.tgz there, which the next pack leaves out; another name inside the folder is refused', async () => {
    const dir = join(env.dir, 'inplace');
    expect((await env.run(['skill', 'init', 'inplace'])).code).toBe(0);
    write(dir, { '.agents/skills.lock.json': '{"lockfileVersion":1,"skills":[]}\n' });
    const first = await env.run(['skill', 'pack', '--json'], { cwd: dir });
    expect(first.code).toBe(0);
    expect(json(first)).toMatchObject({ file: join(dir, 'inplace.tgz'), files: 4 });
    const second = await env.run(['skill', 'pack', '--json'], { cwd: dir });
    expect(json(second)).toMatchObject({ files: 4, sha256: json<{ sha256: string }>(first).sha256 });
    const paths: string[] = [];
    await list({ file: join(dir, 'inplace.tgz'), onReadEntry: (e) => paths.push(e.path) });
    expect(paths).toEqual(['README.md', 'SKILL.md', 'scripts/README.md', 'tools/example.json']);
    expect((await env.run(['skill', 'validate', '--json'], { cwd: dir })).stdout).toContain('"files": 4');

    const inside = await env.run(['skill', 'pack', '-o', 'dist/out.tgz'], { cwd: dir });
    expect(inside.code).toBe(2);
    expect(inside.stderr).toMatch(/\nerror: dist\/out\.tgz is inside the skill folder, so the next publish would ship it\nhint: write it outside the folder \(-o \.\.\/inplace\.tgz\)/);
    expect(existsSync(join(dir, 'dist'))).toBe(false);
    expect((await env.run(['skill', 'pack', '-o', '../inplace-1.tgz'], { cwd: dir })).code).toBe(0);
  });

  test('an invalid bundle is not packed: problems on stderr, exit 1, no file', async () => {
    const r = await env.run(['skill', 'pack', 'broken', '-o', 'broken.tgz']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('broken/SKILL.md:2:1: INVALID_NAME');
    expect(r.stderr).toContain('error INVALID_BUNDLE');
    expect(existsSync(join(env.dir, 'broken.tgz'))).toBe(false);
  });
});

describe('the command line itself', () => {
  test('unknown commands suggest the nearest one and exit 2; a missing required option exits 2', async () => {
    const top = await env.run(['skil']);
    expect(top.code).toBe(2);
    expect(top.stderr).toContain("unknown command 'skil'");
    expect(top.stderr).toContain('Did you mean skill?');
    const sub = await env.run(['skill', 'valdate']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain('Did you mean validate?');
    const missing = await env.run(['skill', 'publish', 'packme']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--version <version>' not specified");
  });

  test('agw --help and the help of every creator and account command list options and examples', async () => {
    const top = await env.run(['--help']);
    expect(top.code).toBe(0);
    expect(top.stdout).toContain('Examples:');
    for (const name of ['skill', 'login', 'chat', 'wallet', 'spend']) expect(top.stdout).toContain(name);
    const { buildProgram } = await import('../../src/cli/index.js');
    const program = buildProgram('0.0.0');
    const mine = ['skill', 'login', 'logout', 'whoami', 'profile', 'entitlements', 'aliases', 'providers', 'spend', 'wallet', 'chat'];
    const leaves = program.commands.filter((c) => mine.includes(c.name())).flatMap((c) => [c, ...c.commands]);
    expect(leaves.length).toBeGreaterThan(25);
    for (const c of leaves) {
      if (c.commands.length > 0 && c.name() !== 'wallet') continue; // a group: its leaves are checked
      let help = '';
      c.configureOutput({ writeOut: (s) => (help += s) });
      c.outputHelp();
      expect(help, c.name()).toContain('Options:');
      expect(help, c.name()).toMatch(/Examples:\n  agw /);
    }
  });

  test('--version and skill validate never load React or Ink', async () => {
    const hook = `data:text/javascript,${encodeURIComponent(
      "import { register } from 'node:module'; register('data:text/javascript,' + encodeURIComponent(" +
        "'export async function resolve(s, c, n) { if (/(^|\\\\/)(ink|react)(\\\\/|$)/.test(s)) process.stderr.write(\"LOADED \" + s + \"\\\\n\"); return n(s, c); }'));",
    )}`;
    const run = (args: string[], cwd = env.dir) =>
      new Promise<string>((resolve) => {
        const child = spawn(process.execPath, ['--import', hook, ...args], { cwd, env: { ...process.env, NO_COLOR: '1' } });
        let err = '';
        child.stderr.on('data', (d) => (err += d));
        child.on('close', () => resolve(err));
      });
    // the hook does see an import of ink (the control, from the project, where ink resolves:
    // a failed import could end the process before the hook's thread wrote its line), then
    // neither command triggers one
    expect(await run(['--input-type=module', '-e', "await import('ink')"], process.cwd())).toContain('LOADED ink');
    expect(await run([AGW_BIN, '--version'])).toBe('');
    expect((await env.run(['skill', 'init', 'fast-start'])).code).toBe(0);
    expect(await run([AGW_BIN, 'skill', 'validate', 'fast-start'])).toBe('');
  });
});
