/**
 * Putting verified files into a skill folder: written to a temp folder next to the target and
 * renamed into place, so a failed install leaves nothing half-written. A folder agw did not
 * install (not in the lockfile), or one changed since, is replaced only with --force.
 */
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { CliError } from '../../errors.js';
import type { ExtractedFile } from './extract.js';
import { absDir, hashTree, treeChanges, type Lockfile } from './lockfile.js';

const exists = (p: string) => lstat(p).then(() => true, () => false);
export const shownPath = (abs: string) => relative(process.cwd(), abs) || '.';

/**
 * Throws unless `abs` may be written: missing, agw's own and unchanged, or `force`.
 * Answers whether the folder already holds exactly `want` (nothing to write then).
 */
export async function checkWritable(root: string, lock: Lockfile, abs: string, force: boolean | undefined, want?: Record<string, string>): Promise<{ same: boolean }> {
  if (!(await exists(abs))) return { same: false };
  const actual = await hashTree(abs);
  if (actual && want && treeChanges(want, actual).length === 0) return { same: true };
  if (force) return { same: false };
  const shown = shownPath(abs);
  const entry = lock.skills.find((e) => absDir(root, e.dir) === abs);
  if (!entry || !actual) {
    throw new CliError(`${shown} already exists and was not installed by agw`, 'pass --force to replace it, or --dir to pick another folder', 'DIR_EXISTS');
  }
  const changes = treeChanges(entry.files, actual);
  if (changes.length > 0) {
    throw new CliError(`${shown} was changed since agw installed it (${changes.slice(0, 3).join('; ')})`, 'pass --force to replace your changes', 'DIR_MODIFIED');
  }
  return { same: false };
}

async function writeTree(dir: string, files: readonly ExtractedFile[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const f of files) {
    const file = join(dir, f.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, f.content, { mode: f.executable ? 0o755 : 0o644, flag: 'wx' });
  }
}

/** Write `files` as the folder `target` (replacing what is there): temp folder, then rename. */
export async function placeFiles(target: string, files: readonly ExtractedFile[]): Promise<void> {
  await mkdir(dirname(target), { recursive: true });
  const tmp = join(dirname(target), `.${basename(target)}.agw-${randomBytes(4).toString('hex')}`);
  try {
    await writeTree(tmp, files);
    if (!(await exists(target))) {
      await rename(tmp, target);
      return;
    }
    const old = `${tmp}-old`;
    await rename(target, old);
    await rename(tmp, target);
    await rm(old, { recursive: true, force: true });
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  }
}
