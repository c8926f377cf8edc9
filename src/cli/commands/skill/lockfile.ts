/**
 * Where skills go and what was put there. Agents read fixed folders, in the project or
 * (`--global`) the home folder, as each agent's docs say today (docs/cli.md cites them):
 * `.agents/skills` (the Agent Skills folder, which Codex reads: `--for codex` installs there),
 * `.claude/skills`, `.cursor/skills`, `.goose/skills`; globally the same under the home
 * folder except Goose's `~/.config/goose/skills` ($XDG_CONFIG_HOME/goose/skills when that is
 * set). The lockfile `.agents/skills.lock.json` of that root records each installed skill
 * (slug, name, version, target, dir, digest, sha256 per file): what `install --frozen`
 * reproduces, what `list` compares the folders with, and how agw knows a folder is its own.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { DIGEST_PATTERN } from '../../../shared/bundle/digest.js';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CliError, UsageError } from '../../errors.js';

/** The user's config folder as Goose finds it: $XDG_CONFIG_HOME, else ~/.config. */
const configHome = (home: string) => (process.env.XDG_CONFIG_HOME && isAbsolute(process.env.XDG_CONFIG_HOME) ? process.env.XDG_CONFIG_HOME : join(home, '.config'));

/** Each agent's skills folder: in a project (relative to it) and global (from the home folder). */
export const TARGETS = {
  agents: { project: '.agents/skills', global: (home: string) => join(home, '.agents', 'skills') },
  claude: { project: '.claude/skills', global: (home: string) => join(home, '.claude', 'skills') },
  codex: { project: '.agents/skills', global: (home: string) => join(home, '.agents', 'skills') },
  cursor: { project: '.cursor/skills', global: (home: string) => join(home, '.cursor', 'skills') },
  goose: { project: '.goose/skills', global: (home: string) => join(configHome(home), 'goose', 'skills') },
} as const;
export type Target = keyof typeof TARGETS;
/** `dir`: installed with --dir into a folder of the user's choice. */
export type LockTarget = Target | 'dir';

export const LOCKFILE = join('.agents', 'skills.lock.json');
const LOCKFILE_VERSION = 1;

export interface LockEntry {
  slug: string;
  name: string;
  version: string;
  target: LockTarget;
  /** The skill's folder, relative to the root (POSIX separators), absolute when outside it. */
  dir: string;
  /** The version's digest (`sha256:…`, docs/marketplace.md "Trust"); absent in lockfiles written before it. */
  digest?: string;
  /** Every file of the skill (relative POSIX path) → its sha256. */
  files: Record<string, string>;
}

export interface Lockfile {
  lockfileVersion: number;
  skills: LockEntry[];
}

/** The root whose `.agents/skills.lock.json` is used: the project (current folder) or the home folder. */
export const rootOf = (global: boolean | undefined): string => (global ? homedir() : process.cwd());

export function parseTarget(raw: string | undefined): Target {
  const t = (raw ?? 'agents') as Target;
  if (!(t in TARGETS)) throw new UsageError(`unknown --for ${raw}`, `use one of ${Object.keys(TARGETS).join(', ')}`);
  return t;
}

/** The folder an agent reads a skill named `name` from, in the project `root` or (global) under the home folder `root`. */
export const skillDir = (root: string, target: Target, name: string, global?: boolean): string =>
  global ? join(TARGETS[target].global(root), name) : join(root, ...TARGETS[target].project.split('/'), name);

/** How a folder is written in the lockfile: relative to the root when inside it. */
export function lockDir(root: string, abs: string): string {
  const rel = relative(root, abs);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : abs;
}

export const absDir = (root: string, dir: string): string => resolve(root, dir);

export async function readLock(root: string): Promise<Lockfile | null> {
  const file = join(root, LOCKFILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    const lock = JSON.parse(text) as Lockfile;
    if (lock.lockfileVersion !== LOCKFILE_VERSION || !Array.isArray(lock.skills)) throw new Error(`lockfileVersion ${String(lock.lockfileVersion)}`);
    const bad = lock.skills.findIndex((e) => !isEntry(e));
    if (bad >= 0) throw new Error(`skills[${bad}] needs slug, name, version, dir, a target and files (path → sha256), and a digest of the form sha256:<64 hex> if any`);
    return lock;
  } catch (e) {
    throw new CliError(`${file} is not a lockfile agw can read (${(e as Error).message})`, 'restore it from version control, or delete it and install the skills again', 'BAD_LOCKFILE');
  }
}

/** A lockfile with no skills: what a root without one starts from. */
export async function readLockOrEmpty(root: string): Promise<Lockfile> {
  return (await readLock(root)) ?? { lockfileVersion: LOCKFILE_VERSION, skills: [] };
}

function isEntry(e: unknown): e is LockEntry {
  const x = e as Partial<Record<keyof LockEntry, unknown>> | null;
  if (!x || typeof x !== 'object') return false;
  const strings = [x.slug, x.name, x.version, x.dir].every((v) => typeof v === 'string' && v !== '');
  const target = typeof x.target === 'string' && (x.target === 'dir' || x.target in TARGETS);
  const files = !!x.files && typeof x.files === 'object' && !Array.isArray(x.files) && Object.values(x.files).every((v) => typeof v === 'string');
  const digest = x.digest === undefined || (typeof x.digest === 'string' && DIGEST_PATTERN.test(x.digest));
  return strings && target && files && digest;
}

/** Write the lockfile atomically, entries sorted by folder (stable diffs). */
export async function writeLock(root: string, lock: Lockfile): Promise<void> {
  const file = join(root, LOCKFILE);
  await mkdir(join(root, '.agents'), { recursive: true });
  const skills = [...lock.skills]
    .sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0))
    .map((e) => ({ ...e, files: Object.fromEntries(Object.entries(e.files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) }));
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify({ lockfileVersion: LOCKFILE_VERSION, skills }, null, 2) + '\n');
  await rename(tmp, file);
}

/** Every non-directory entry under `dir` (relative POSIX path) → sha256, or 'symlink'/'other'; null when `dir` is missing. */
export async function hashTree(dir: string): Promise<Record<string, string> | null> {
  try {
    if (!(await lstat(dir)).isDirectory()) return null;
  } catch {
    return null;
  }
  const out: Record<string, string> = {};
  for (const d of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (d.isDirectory()) continue;
    const abs = join(d.parentPath, d.name);
    const rel = relative(dir, abs).split(sep).join('/');
    out[rel] = d.isFile() ? createHash('sha256').update(await readFile(abs)).digest('hex') : d.isSymbolicLink() ? 'symlink' : 'other';
  }
  return out;
}

/** The differences between a folder and what the lockfile recorded for it (empty when it is as installed). */
export function treeChanges(recorded: Readonly<Record<string, string>>, actual: Record<string, string> | null): string[] {
  if (!actual) return ['the folder is missing'];
  const out: string[] = [];
  for (const [path, sha] of Object.entries(recorded)) {
    if (!(path in actual)) out.push(`${path}: missing`);
    else if (actual[path] !== sha) out.push(`${path}: changed`);
  }
  for (const path of Object.keys(actual)) if (!(path in recorded)) out.push(`${path}: added`);
  return out;
}
