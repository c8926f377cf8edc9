/** Read a skill directory into BundleEntry[] without following symlinks. */
import { constants } from 'node:fs';
import { lstat, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ignore from 'ignore';
import { checkSkillName, parseFrontMatter } from './frontmatter.js';
import { isToolManifestPath } from './tools.js';
import { MAX_FILE_BYTES, MAX_FILES, SKILL_MD, type BundleEntry } from './types.js';

export interface ReadBundleOptions {
  /** Extra ignore patterns, same syntax as .agwignore. */
  ignore?: string[];
}

export const DEFAULT_IGNORES = ['.git/', 'node_modules/', '.DS_Store'];
export const IGNORE_FILE = '.agwignore';
/**
 * agw's own files, never part of a bundle whatever .agwignore says: the ignore file itself
 * and `.gitkeep` (the template's placeholder for an empty folder) at any depth, and the
 * installs' lockfile at the root. `agw skill pack`'s output, `NAME.tgz` at the root, is
 * left out too (packFileName).
 */
export const OWN_FILE_NAMES = [IGNORE_FILE, '.gitkeep'];
export const LOCKFILE_PATH = '.agents/skills.lock.json';

/** What `agw skill pack` writes by default: `NAME.tgz`, NAME the front-matter name. */
export const packFileName = (name: string) => `${name}.tgz`;

/** The front-matter name of a SKILL.md (undefined when it has none that is valid). */
function skillNameOf(content: Buffer | undefined): string | undefined {
  const name = content ? parseFrontMatter(content.toString('utf8')).data?.name : undefined;
  return typeof name === 'string' && checkSkillName(name) === null ? name : undefined;
}

/** Drops agw's own files (OWN_FILE_NAMES, the lockfile) and pack's output named after the skill. */
function withoutOwnFiles(entries: BundleEntry[]): BundleEntry[] {
  const name = skillNameOf(entries.find((e) => e.path === SKILL_MD && e.kind === 'file')?.content);
  const packed = name === undefined ? undefined : packFileName(name);
  return entries.filter((e) => {
    if (e.path === LOCKFILE_PATH || e.path === packed) return false;
    return !OWN_FILE_NAMES.includes(e.path.slice(e.path.lastIndexOf('/') + 1));
  });
}
/** Stop walking after this many entries (the bundle is far over MAX_FILES anyway). */
export const MAX_WALK_ENTRIES = 10_000;

type Matcher = (rel: string, isDir: boolean) => boolean;

/**
 * `.agwignore` means what `.gitignore` means (the `ignore` package, as ESLint and Prettier
 * use it): comments, `!` negation, character classes, `**`, trailing `/` for directories,
 * a leading or middle `/` anchors the pattern to the bundle root. As in git, a file inside
 * an ignored directory cannot be re-included (the walk never enters that directory).
 */
export function compileIgnore(patterns: readonly string[]): Matcher {
  const ig = ignore({ allowRelativePaths: false }).add(patterns as string[]);
  return (rel, isDir) => ig.ignores(isDir ? `${rel}/` : rel);
}

async function readIgnoreFile(dir: string): Promise<string[]> {
  const file = join(dir, IGNORE_FILE);
  try {
    if (!(await lstat(file)).isFile()) return [];
    return (await readFile(file, 'utf8')).split(/\r?\n/);
  } catch {
    return [];
  }
}

interface Found { rel: string; abs: string; kind: BundleEntry['kind'] }

const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/** Stat and (when wanted and within the limit) read one file, reading at most MAX_FILE_BYTES + 1 bytes. */
async function readEntry(f: Found, wantContent: boolean): Promise<BundleEntry> {
  if (f.kind !== 'file') return { path: f.rel, size: (await lstat(f.abs)).size, kind: f.kind };
  let fh;
  try {
    fh = await open(f.abs, OPEN_FLAGS);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') return { path: f.rel, size: 0, kind: 'symlink' };
    throw e;
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) return { path: f.rel, size: st.size, kind: st.isDirectory() ? 'directory' : 'other' };
    if (st.size > MAX_FILE_BYTES || !wantContent) return { path: f.rel, size: st.size, kind: 'file' };
    const cap = MAX_FILE_BYTES + 1; // one byte more than allowed: detects files that grew
    let buf = Buffer.allocUnsafe(Math.min(st.size + 1, cap));
    let n = 0;
    for (;;) {
      if (n === buf.length) {
        if (buf.length >= cap) break;
        const bigger = Buffer.allocUnsafe(Math.min(buf.length * 2, cap));
        buf.copy(bigger, 0, 0, n);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
      if (bytesRead === 0) break;
      n += bytesRead;
    }
    if (n > MAX_FILE_BYTES) return { path: f.rel, size: n, kind: 'file' };
    return { path: f.rel, size: n, kind: 'file', content: buf.subarray(0, n) };
  } finally {
    await fh.close();
  }
}

/**
 * Walk `dir` with lstat semantics: symlinks and special files become entries of their kind
 * (so the validator reports them), paths are relative POSIX, default ignores and `.agwignore`
 * apply, and agw's own files are left out (OWN_FILE_NAMES, the lockfile, pack's output).
 * Content is read for files within MAX_FILE_BYTES; when the bundle has more than MAX_FILES
 * files only SKILL.md and tool manifests are read.
 */
export async function readBundleDir(dir: string, opts: ReadBundleOptions = {}): Promise<BundleEntry[]> {
  const ignored = compileIgnore([...DEFAULT_IGNORES, ...(opts.ignore ?? []), ...(await readIgnoreFile(dir))]);
  const found: Found[] = [];
  const walk = async (abs: string, rel: string): Promise<void> => {
    const dirents = (await readdir(abs, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const subdirs: Promise<void>[] = [];
    for (const d of dirents) {
      if (found.length >= MAX_WALK_ENTRIES) break;
      const childRel = rel ? `${rel}/${d.name}` : d.name;
      const childAbs = join(abs, d.name);
      const isDir = d.isDirectory();
      if (ignored(childRel, isDir)) continue;
      if (isDir) subdirs.push(walk(childAbs, childRel));
      else found.push({ rel: childRel, abs: childAbs, kind: d.isFile() ? 'file' : d.isSymbolicLink() ? 'symlink' : 'other' });
    }
    await Promise.all(subdirs);
  };
  await walk(dir, '');
  const readAll = found.length <= MAX_FILES;
  const entries = await Promise.all(
    found.map((f) => readEntry(f, readAll || f.rel === SKILL_MD || isToolManifestPath(f.rel))),
  );
  return withoutOwnFiles(entries).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
