import { mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FILE_BYTES, compileIgnore, readBundleDir, validateBundle } from '../../src/shared/bundle/index.js';

const TEMPLATE = join(dirname(fileURLToPath(import.meta.url)), '../../templates/skill');
const SKILL = '---\nname: dir-skill\ndescription: From a directory.\n---\n# Hi\n';
let root: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'agw-bundle-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

async function tree(name: string, files: Record<string, string | Buffer>): Promise<string> {
  const dir = join(root, name);
  for (const [rel, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, rel)), { recursive: true });
    await writeFile(join(dir, rel), content);
  }
  return dir;
}

describe('readBundleDir', () => {
  it('reads a valid directory into relative POSIX entries with content', async () => {
    const dir = await tree('valid', { 'SKILL.md': SKILL, 'scripts/a/b.sh': 'echo', 'assets/x.txt': 'x' });
    const entries = await readBundleDir(dir);
    expect(entries.map((e) => e.path)).toEqual(['SKILL.md', 'assets/x.txt', 'scripts/a/b.sh']);
    expect(entries.every((e) => e.kind === 'file' && e.content !== undefined && e.size === e.content.length)).toBe(true);
    const r = validateBundle(entries);
    expect(r.problems).toEqual([]);
    expect(r.meta).toEqual({ name: 'dir-skill', description: 'From a directory.' });
  });

  it('reports symlinks (to files and to directories) as NOT_REGULAR_FILE without following them', async () => {
    const dir = await tree('links', { 'SKILL.md': SKILL, 'real/f.txt': 'f' });
    await symlink('/etc/passwd', join(dir, 'passwd'));
    await symlink(join(dir, 'real'), join(dir, 'linkdir'));
    const entries = await readBundleDir(dir);
    const links = entries.filter((e) => e.kind === 'symlink').map((e) => e.path).sort();
    expect(links).toEqual(['linkdir', 'passwd']);
    expect(entries.find((e) => e.path === 'passwd')?.content).toBeUndefined();
    expect(entries.some((e) => e.path.startsWith('linkdir/'))).toBe(false);
    const ps = validateBundle(entries).problems;
    expect(ps.filter((p) => p.rule === 'NOT_REGULAR_FILE').map((p) => p.path).sort()).toEqual(['linkdir', 'passwd']);
  });

  it('skips .git/, node_modules/, .DS_Store and honours .agwignore and opts.ignore', async () => {
    const dir = await tree('ignores', {
      'SKILL.md': SKILL,
      '.git/HEAD': 'ref', '.git/objects/aa': 'x',
      'node_modules/pkg/index.js': 'x', 'sub/node_modules/y.js': 'x',
      '.DS_Store': 'x', 'assets/.DS_Store': 'x',
      '.agwignore': '# comment\n\n*.log\nbuild/\nsecret.txt\n/rootonly.md\ndocs/drafts/\n',
      'a.log': 'x', 'deep/b.log': 'x', 'build/out.js': 'x', 'deep/build/out.js': 'x',
      'secret.txt': 'x', 'deep/secret.txt': 'x', 'rootonly.md': 'x', 'deep/rootonly.md': 'kept',
      'docs/drafts/d.md': 'x', 'docs/final.md': 'kept', 'build.md': 'kept', 'extra.tmp': 'x',
    });
    const paths = (await readBundleDir(dir, { ignore: ['*.tmp'] })).map((e) => e.path);
    expect(paths).toEqual(['SKILL.md', 'build.md', 'deep/rootonly.md', 'docs/final.md']);
  });

  it('never reads agw’s own files: .agwignore and .gitkeep anywhere, the lockfile, pack’s NAME.tgz at the root (issue #33)', async () => {
    const dir = await tree('own-files', {
      'SKILL.md': '---\nname: own-files\ndescription: d\n---\n',
      '.agwignore': '!.gitkeep\n!own-files.tgz\n',
      'assets/.gitkeep': '',
      'own-files.tgz': 'packed',
      '.agents/skills.lock.json': '{}',
      '.agents/skills/other/SKILL.md': 'x',
      'assets/own-files.tgz': 'not pack output',
      'other.tgz': 'not pack output',
    });
    const paths = (await readBundleDir(dir)).map((e) => e.path);
    expect(paths).toEqual(['.agents/skills/other/SKILL.md', 'SKILL.md', 'assets/own-files.tgz', 'other.tgz']);
  });

  it('does not read files above the size limit but reports them', async () => {
    const dir = await tree('big', { 'SKILL.md': SKILL, 'big.bin': Buffer.alloc(MAX_FILE_BYTES + 1) });
    const entries = await readBundleDir(dir);
    const big = entries.find((e) => e.path === 'big.bin')!;
    expect(big.size).toBe(MAX_FILE_BYTES + 1);
    expect(big.content).toBeUndefined();
    expect(validateBundle(entries).problems.map((p) => [p.rule, p.path])).toEqual([['FILE_TOO_LARGE', 'big.bin']]);
  });

  it('with more than 200 files reads only SKILL.md and tool manifests, and still reports everything', async () => {
    const files: Record<string, string> = { 'SKILL.md': '---\nname: Bad\ndescription: d\n---\n', 'tools/t.json': '{' };
    for (let i = 0; i < 205; i++) files[`many/${i}.txt`] = 'x';
    const entries = await readBundleDir(await tree('many', files));
    expect(entries).toHaveLength(207);
    expect(entries.filter((e) => e.content !== undefined).map((e) => e.path)).toEqual(['SKILL.md', 'tools/t.json']);
    const rules = validateBundle(entries).problems.map((p) => p.rule).sort();
    expect(rules).toEqual(['INVALID_NAME', 'INVALID_TOOL_MANIFEST', 'TOO_MANY_FILES']);
  });

  it('validates a 200-file bundle (read + validate) in well under 100 ms', async () => {
    const files: Record<string, string> = { 'SKILL.md': SKILL };
    for (let i = 0; i < 20; i++) {
      files[`tools/t${i}.json`] = JSON.stringify({ name: `t${i}`, description: 'd', parameters: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] } });
    }
    for (let i = 0; Object.keys(files).length < 200; i++) files[`assets/d${i % 10}/f${i}.txt`] = 'content '.repeat(200);
    const dir = await tree('perf', files);
    await readBundleDir(dir).then(validateBundle); // warm up (ajv meta-schemas, module init)
    const times: number[] = [];
    for (let run = 0; run < 5; run++) {
      const t0 = performance.now();
      const r = validateBundle(await readBundleDir(dir));
      times.push(performance.now() - t0);
      expect(r.problems).toEqual([]);
    }
    const entries = await readBundleDir(dir);
    const validateTimes = Array.from({ length: 5 }, () => {
      const t1 = performance.now();
      validateBundle(entries);
      return performance.now() - t1;
    });
    const validateOnly = Math.min(...validateTimes);
    const best = Math.min(...times);
    console.log(`200-file bundle: read+validate best ${best.toFixed(1)} ms (runs ${times.map((t) => t.toFixed(1)).join('/')}), validate only (best of 5) ${validateOnly.toFixed(1)} ms`);
    expect(best).toBeLessThan(100);
    expect(validateOnly).toBeLessThan(100);
  });
});

describe('compileIgnore', () => {
  it('keeps the basics: basenames at any depth, directory-only, anchored, ?, **', () => {
    const m = compileIgnore(['*.log', 'out/', 'exact.txt', '/top.md', 'a/b/', 'x?.md', 'docs/**/*.bak', '# c']);
    expect(m('deep/x.log', false)).toBe(true);
    expect(m('out', true)).toBe(true);
    expect(m('out', false)).toBe(false);
    expect(m('z/exact.txt', false)).toBe(true);
    expect(m('top.md', false)).toBe(true);
    expect(m('z/top.md', false)).toBe(false);
    expect(m('a/b', true)).toBe(true);
    expect(m('z/a/b', true)).toBe(false);
    expect(m('x1.md', false)).toBe(true);
    expect(m('x12.md', false)).toBe(false);
    expect(m('docs/q/r/s.bak', false)).toBe(true);
    expect(m('keep.md', false)).toBe(false);
  });

  // What the old hand-written subset got wrong: these are gitignore semantics.
  it('.agwignore negation re-includes a file (!keep.txt)', () => {
    const m = compileIgnore(['*.txt', '!keep.txt']);
    expect(m('notes.txt', false)).toBe(true);
    expect(m('keep.txt', false)).toBe(false);
    expect(m('deep/keep.txt', false)).toBe(false);
  });
  it('.agwignore nested patterns (docs/**/*.tmp) match at any depth under docs only', () => {
    const m = compileIgnore(['docs/**/*.tmp']);
    expect(m('docs/a.tmp', false)).toBe(true);
    expect(m('docs/x/y/z.tmp', false)).toBe(true);
    expect(m('other/docs/a.tmp', false)).toBe(false);
    expect(m('a.tmp', false)).toBe(false);
  });
  it('.agwignore directory patterns match directories at any depth, not files of that name', () => {
    const m = compileIgnore(['cache/', '**/fixtures/big/']);
    expect(m('cache', true)).toBe(true);
    expect(m('x/cache', true)).toBe(true);
    expect(m('cache', false)).toBe(false);
    expect(m('test/fixtures/big', true)).toBe(true);
  });
  it('.agwignore anchored patterns (/build, a/b) only match from the root', () => {
    const m = compileIgnore(['/build', 'notes/draft.md']);
    expect(m('build', true)).toBe(true);
    expect(m('src/build', true)).toBe(false);
    expect(m('notes/draft.md', false)).toBe(true);
    expect(m('x/notes/draft.md', false)).toBe(false);
  });
  it('.agwignore character classes, escapes and trailing spaces follow gitignore', () => {
    const m = compileIgnore(['*.[oa]', '\\#hash.md', 'spaced.md   ']);
    expect(m('lib.o', false)).toBe(true);
    expect(m('lib.a', false)).toBe(true);
    expect(m('lib.c', false)).toBe(false);
    expect(m('#hash.md', false)).toBe(true);
    expect(m('spaced.md', false)).toBe(true);
  });
});

describe('readBundleDir with gitignore semantics', () => {
  it('packs what git would commit: negation, nested globs, directories, anchoring', async () => {
    const dir = await tree('gitignore', {
      'SKILL.md': SKILL,
      '.agwignore': '*.txt\n!keep.txt\ndocs/**/*.tmp\ncache/\n/build\nlogs/*\n!logs/important.log\n',
      'notes.txt': 'x', 'keep.txt': 'kept', 'sub/keep.txt': 'kept',
      'docs/a.tmp': 'x', 'docs/deep/b.tmp': 'x', 'docs/deep/c.md': 'kept', 'other/d.tmp': 'kept',
      'cache/x.bin': 'x', 'sub/cache/y.bin': 'x',
      'build/out.js': 'x', 'sub/build/out.js': 'kept',
      'logs/debug.log': 'x', 'logs/important.log': 'kept',
    });
    const paths = (await readBundleDir(dir)).map((e) => e.path);
    expect(paths).toEqual([
      'SKILL.md', 'docs/deep/c.md', 'keep.txt', 'logs/important.log', 'other/d.tmp', 'sub/build/out.js', 'sub/keep.txt',
    ]);
  });
});

describe('templates/skill', () => {
  it('has the expected layout', async () => {
    const all = (await readdir(TEMPLATE, { recursive: true, withFileTypes: true })).filter((d) => d.isFile());
    const rels = all.map((d) => join(d.parentPath, d.name).slice(TEMPLATE.length + 1).split('\\').join('/')).sort();
    expect(rels).toEqual(['.agwignore', 'README.md', 'SKILL.md', 'assets/.gitkeep', 'scripts/README.md', 'tools/example.json']);
    expect(await readFile(join(TEMPLATE, 'SKILL.md'), 'utf8')).toContain('name: {{name}}');
  });

  it('validates with zero problems once {{name}} is replaced', async () => {
    const dir = join(root, 'from-template');
    for (const e of await readBundleDir(TEMPLATE)) {
      await mkdir(dirname(join(dir, e.path)), { recursive: true });
      await writeFile(join(dir, e.path), e.content!.toString('utf8').replaceAll('{{name}}', 'my-new-skill'));
    }
    const r = validateBundle(await readBundleDir(dir));
    expect(r.problems).toEqual([]);
    expect(r.meta?.name).toBe('my-new-skill');
  });
});
