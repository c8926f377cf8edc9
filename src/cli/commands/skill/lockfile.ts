/**
 * Where skills go and what was put there. Agents read fixed folders: `.agents/skills` (the
 * Agent Skills client guide; Codex, Cursor and Goose read it too), `.claude/skills`,
 * `.codex/skills`, `.cursor/skills`, `.goose/skills`, in the project or (`--global`) the home
 * folder. The lockfile `.agents/skills.lock.json` of that root records each installed skill
 * (slug, name, version, target, dir, sha256 per file): what `install --frozen` reproduces,
 * what `list` compares the folders with, and how agw knows a folder is its own.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { CliError, UsageError } from '../../errors.js';

export const TARGETS = { agents: '.agents', claude: '.claude', codex: '.codex', cursor: '.cursor', goose: '.goose' } as const;
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

/** The folder an agent reads a skill named `name` from. */
export const skillDir = (root: string, target: Target, name: string): string => join(root, TARGETS[target], 'skills', name);

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
    if (bad >= 0) throw new Error(`skills[${bad}] needs slug, name, version, dir, a target and files (path → sha256)`);
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
  return strings && target && files;
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
