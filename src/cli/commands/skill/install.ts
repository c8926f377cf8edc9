/**
 * `agw skill install SKILL [--version V] [--for agents|claude|codex|cursor|goose] [--global]
 * [--dir DIR] [--yes] [--force]`: into the folder that agent reads, named after the skill's
 * front-matter `name`, verified file by file, recorded in `.agents/skills.lock.json`.
 * `agw skill install --frozen`: exactly what the lockfile lists, or nothing (like `npm ci`).
 */
import { basename, resolve } from 'node:path';
import { Api } from '../../api.js';
import type { GlobalOpts } from '../../auth.js';
import { CliError, UsageError } from '../../errors.js';
import { usd } from '../../format.js';
import { bold, dim, printJson } from '../../output.js';
import { acquire, type Acquired } from './acquire.js';
import { LOCKFILE, absDir, lockDir, parseTarget, readLock, readLockOrEmpty, rootOf, skillDir, treeChanges, writeLock, type LockEntry, type LockTarget, type Lockfile } from './lockfile.js';
import { checkWritable, placeFiles, shownPath } from './place.js';
import { getSkill } from './resolve.js';

export interface InstallOpts extends GlobalOpts {
  version?: string;
  for?: string;
  global?: boolean;
  dir?: string;
  yes?: boolean;
  force?: boolean;
  frozen?: boolean;
}

/** Record `got` at `abs` in the lockfile (one entry per folder). */
export function upsertEntry(lock: Lockfile, root: string, abs: string, target: LockTarget, got: Acquired): LockEntry {
  const entry: LockEntry = { slug: got.skill.slug, name: got.name, version: got.version, target, dir: lockDir(root, abs), digest: got.seal.digest, files: got.sums };
  lock.skills = [...lock.skills.filter((e) => absDir(root, e.dir) !== abs), entry];
  return entry;
}

export async function install(ref: string | undefined, opts: InstallOpts): Promise<void> {
  if (opts.frozen) {
    if (ref || opts.version || opts.dir || opts.for) throw new UsageError('--frozen installs what the lockfile lists; it takes no SKILL, --version, --for or --dir');
    return frozen(opts);
  }
  if (!ref) throw new UsageError('name the skill to install', 'agw skill install SLUG, or agw skill install --frozen for what .agents/skills.lock.json lists');
  if (opts.dir && opts.for) throw new UsageError('use --for or --dir, not both', '--dir is the skill’s own folder; --for picks the agent whose folder it goes into');
  const target: LockTarget = opts.dir ? 'dir' : parseTarget(opts.for);
  const root = rootOf(opts.global);
  const lock = await readLockOrEmpty(root);
  const api = await Api.open(opts);
  const skill = await getSkill(api, ref);

  // Refuse before anything is charged when the folder is already known to be off limits.
  const known = lock.skills.find((e) => e.slug === skill.slug && e.target === target);
  const guess = opts.dir ? resolve(opts.dir) : target !== 'dir' ? skillDir(root, target, known?.name ?? skill.slug, opts.global) : undefined;
  if (guess) await checkWritable(root, lock, guess, opts.force);

  const got = await acquire(api, skill, opts.version, opts.yes);
  const abs = opts.dir ? resolve(opts.dir) : skillDir(root, target as Exclude<LockTarget, 'dir'>, got.name, opts.global);
  if (opts.dir && basename(abs) !== got.name) {
    process.stderr.write(`warning NAME_DIRECTORY_MISMATCH: ${shownPath(abs)} is not named after the skill "${got.name}"; agents that follow the Agent Skills specification expect the folder to be named so\n`);
  }
  const { same } = await checkWritable(root, lock, abs, opts.force, got.sums);
  if (!same) await placeFiles(abs, got.files);
  upsertEntry(lock, root, abs, target, got);
  await writeLock(root, lock);

  const { result } = got;
  if (opts.json) {
    const files = got.listed ?? got.files.map((f) => ({ path: f.path, size: f.content.length, sha256: got.sums[f.path] }));
    return printJson({
      ...result, version: got.version, slug: skill.slug, name: got.name, target, dir: abs, lockfile: resolve(root, LOCKFILE),
      verified: 'signature', digest: got.seal.digest, signature: got.seal.signature, findings: got.seal.findings, files,
    });
  }
  const paid = result.charged > 0 ? `, charged ${usd(result.charged)}` : result.alreadyInstalled && skill.price > 0 ? ', already owned' : '';
  process.stdout.write(`installed ${bold(skill.slug)} ${got.version} into ${shownPath(abs)} (${got.files.length} files${paid})\n`);
  if (process.stdout.isTTY) process.stdout.write(dim(`agents load it from ${shownPath(resolve(abs, 'SKILL.md'))}\n`));
}

/** Every skill of the lockfile at its recorded version, folder and sha256s; anything different fails before a file is written. */
async function frozen(opts: InstallOpts): Promise<void> {
  const root = rootOf(opts.global);
  const lock = await readLock(root);
  const lockPath = resolve(root, LOCKFILE);
  if (!lock) throw new CliError(`${shownPath(lockPath)} does not exist`, 'install skills without --frozen first (agw skill install SLUG) and commit the lockfile', 'NO_LOCKFILE');
  const api = await Api.open(opts);
  const fetched: { entry: LockEntry; got: Acquired }[] = [];
  for (const entry of lock.skills) {
    const got = await acquire(api, await getSkill(api, entry.slug), entry.version, opts.yes, { digest: entry.digest });
    const diffs = treeChanges(entry.files, got.sums);
    if (diffs.length > 0) {
      throw new CliError(
        `${entry.slug} ${entry.version} differs from the lockfile (${diffs.slice(0, 3).join('; ')}); nothing was written`,
        'the version was republished: check it, then agw skill update to record what it is now',
        'LOCKFILE_MISMATCH',
      );
    }
    fetched.push({ entry, got });
  }
  const items = [];
  for (const { entry, got } of fetched) {
    const abs = absDir(root, entry.dir);
    const { same } = await checkWritable(root, lock, abs, true, entry.files);
    if (!same) await placeFiles(abs, got.files);
    items.push({ slug: entry.slug, name: entry.name, version: entry.version, target: entry.target, dir: abs, changed: !same, charged: got.result.charged });
  }
  if (opts.json) return printJson({ lockfile: lockPath, items });
  for (const i of items) process.stdout.write(`${i.changed ? 'installed' : 'unchanged'} ${i.slug} ${i.version} in ${shownPath(i.dir)}\n`);
  process.stdout.write(`${items.length} skill${items.length === 1 ? '' : 's'} as ${shownPath(lockPath)} lists\n`);
}
