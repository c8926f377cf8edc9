/**
 * The installed skills of a project (or, with --global, of the home folder), as its lockfile
 * records them: `agw skill list`, `agw skill update [SKILL]`, `agw skill remove SKILL`.
 */
import { rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import semver from 'semver';
import type { PublicVersionsT } from '../../../shared/schemas/skills.js';
import { Api } from '../../api.js';
import type { GlobalOpts } from '../../auth.js';
import { CliError } from '../../errors.js';
import { bold, dim, isTty, printJson, printTable, yellow } from '../../output.js';
import { acquire } from './acquire.js';
import { upsertEntry } from './install.js';
import { LOCKFILE, absDir, hashTree, parseTarget, readLockOrEmpty, rootOf, skillDir, treeChanges, writeLock, type LockEntry, type Lockfile } from './lockfile.js';
import { checkWritable, placeFiles, shownPath } from './place.js';
import { getSkill } from './resolve.js';

interface ScopeOpts extends GlobalOpts {
  global?: boolean;
}

export async function list(opts: ScopeOpts): Promise<void> {
  const root = rootOf(opts.global);
  const lock = await readLockOrEmpty(root);
  const items = [];
  for (const e of lock.skills) {
    const dir = absDir(root, e.dir);
    const changes = treeChanges(e.files, await hashTree(dir));
    items.push({ slug: e.slug, name: e.name, version: e.version, target: e.target, dir, modified: changes.length > 0, changes });
  }
  if (opts.json) return printJson({ items: items.map(({ changes: _c, ...i }) => i) });
  if (items.length === 0) {
    process.stdout.write(`no skills installed ${dim(`(${shownPath(resolve(root, LOCKFILE))} lists none; agw skill install SLUG)`)}\n`);
    return;
  }
  printTable(['SLUG', 'VERSION', 'TARGET', 'DIR', 'MODIFIED'], items.map((i) => [i.slug, i.version, i.target, shownPath(i.dir), i.modified ? 'yes' : 'no']));
  if (isTty()) for (const i of items.filter((x) => x.modified)) process.stdout.write(yellow(`${i.slug}: ${i.changes.slice(0, 5).join('; ')}\n`));
}

/** Versions strictly after `from` up to and including `to`, oldest first (SemVer order; else just `to`). */
function between(v: PublicVersionsT, from: string, to: string): PublicVersionsT['versions'] {
  if (!semver.valid(from) || !semver.valid(to)) return v.versions.filter((x) => x.version === to);
  return v.versions
    .filter((x) => semver.valid(x.version) && semver.gt(x.version, from) && semver.lte(x.version, to))
    .sort((a, b) => semver.compare(a.version, b.version));
}

/** Is `to` (the current version) newer than the installed `from`? Non-SemVer: whenever it differs. */
const isNewer = (from: string, to: string) => (semver.valid(from) && semver.valid(to) ? semver.gt(to, from) : from !== to);

export async function update(ref: string | undefined, opts: ScopeOpts & { yes?: boolean; force?: boolean }): Promise<void> {
  const root = rootOf(opts.global);
  const lock = await readLockOrEmpty(root);
  const api = await Api.open(opts);
  const wanted = ref ? await getSkill(api, ref) : undefined;
  const entries = lock.skills.filter((e) => !wanted || e.slug === wanted.slug);
  if (ref && entries.length === 0) throw new CliError(`${ref} is not installed here`, `agw skill install ${ref}`, 'NOT_INSTALLED');
  const items = [];
  for (const e of entries) {
    const skill = wanted ?? (await getSkill(api, e.slug));
    const versions = await api.get<PublicVersionsT>(`/skills/${skill.id}/public-versions`, { auth: 'optional' });
    const to = versions.currentVersion;
    if (!to || !isNewer(e.version, to)) {
      items.push({ slug: e.slug, name: e.name, dir: absDir(root, e.dir), from: e.version, to: e.version, updated: false, notes: [] });
      continue;
    }
    const abs = absDir(root, e.dir);
    await checkWritable(root, lock, abs, opts.force);
    const got = await acquire(api, skill, to, opts.yes);
    await placeFiles(abs, got.files);
    upsertEntry(lock, root, abs, e.target, got);
    await writeLock(root, lock);
    const notes = between(versions, e.version, to).map((x) => ({ version: x.version, notes: x.notes }));
    items.push({ slug: e.slug, name: got.name, dir: abs, from: e.version, to, updated: true, notes });
  }
  if (opts.json) return printJson({ items });
  if (items.length === 0) process.stdout.write('no skills installed here\n');
  for (const i of items) {
    if (!i.updated) {
      process.stdout.write(`${i.slug} ${i.from} is up to date\n`);
      continue;
    }
    process.stdout.write(`updated ${bold(i.slug)} ${i.from} → ${i.to} in ${shownPath(i.dir)}\n`);
    for (const n of i.notes) process.stdout.write(`\n${bold(n.version)}\n${n.notes ? n.notes.replace(/\n?$/, '\n') : dim('(no release notes)\n')}`);
  }
}

export async function remove(ref: string, opts: ScopeOpts & { for?: string; force?: boolean }): Promise<void> {
  const root = rootOf(opts.global);
  const lock = await readLockOrEmpty(root);
  const target = opts.for ? parseTarget(opts.for) : undefined;
  // --for names the agent's folder: codex and agents share .agents/skills
  const inFolder = (e: LockEntry) => !target || e.target === target || (e.target !== 'dir' && absDir(root, e.dir) === skillDir(root, target, e.name, opts.global));
  const gone: LockEntry[] = lock.skills.filter((e) => (e.slug === ref || e.name === ref) && inFolder(e));
  if (gone.length === 0) throw new CliError(`${ref} is not installed here`, `agw skill list${opts.global ? ' --global' : ''} shows what is`, 'NOT_INSTALLED');
  for (const e of gone) {
    const changes = treeChanges(e.files, await hashTree(absDir(root, e.dir)));
    if (changes.length > 0 && changes[0] !== 'the folder is missing' && !opts.force) {
      throw new CliError(`${shownPath(absDir(root, e.dir))} was changed since agw installed it (${changes.slice(0, 3).join('; ')})`, 'pass --force to delete it with your changes', 'DIR_MODIFIED');
    }
  }
  for (const e of gone) await rm(absDir(root, e.dir), { recursive: true, force: true });
  lock.skills = lock.skills.filter((e) => !gone.includes(e));
  await writeLock(root, lock);
  const removed = gone.map((e) => ({ slug: e.slug, name: e.name, version: e.version, target: e.target, dir: absDir(root, e.dir) }));
  if (opts.json) return printJson({ removed });
  for (const r of removed) process.stdout.write(`removed ${r.slug} ${r.version} from ${shownPath(r.dir)}\n`);
}
