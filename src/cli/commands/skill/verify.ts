/**
 * `agw skill verify SLUG[@VERSION] | DIR`: is what is installed (or downloaded) what the
 * marketplace signed? A folder's files are hashed as the version digest is framed and
 * compared with the version's digest, whose Ed25519 signature is checked with the keys the
 * daemon publishes. DIR (an argument with a "/" or starting with ".") is one folder: the
 * lockfile (project, then home) says which version it holds, else the version whose digest
 * it has. A SLUG checks every folder the lockfile records for it (--global: the home
 * lockfile's); installed nowhere, it downloads the version (owners and buyers) and checks
 * that. Exit 0 when everything checked holds, 1 otherwise.
 */
import { lstat, readFile, readdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { bundleDigest } from '../../../shared/bundle/digest.js';
import { parseFrontMatter } from '../../../shared/bundle/index.js';
import type { PublicVersionsT, SkillT } from '../../../shared/schemas/skills.js';
import { Api } from '../../api.js';
import type { GlobalOpts } from '../../auth.js';
import { CliError, UsageError } from '../../errors.js';
import { bold, green, printJson, red } from '../../output.js';
import { download } from './acquire.js';
import { readTarGz } from './extract.js';
import { absDir, hashTree, readLock, rootOf, treeChanges, type LockEntry } from './lockfile.js';
import { shownPath } from './place.js';
import { getSkill } from './resolve.js';
import { checkSignature, fetchKeys, fetchSeal, type Seal, type SignatureCheck, type SkillKey } from './trust.js';

interface VerifyOpts extends GlobalOpts {
  global?: boolean;
}

interface Checked {
  slug: string | null;
  version: string | null;
  /** The folder checked; null for a download. */
  dir: string | null;
  /** The digest of the files checked. */
  digest: string;
  /** The version's signed digest (null: no version has these files). */
  expected: string | null;
  signature: { kid: string; check: SignatureCheck } | null;
  ok: boolean;
  /** What differs from the lockfile's record, when there is one. */
  changes: string[];
}

type Files = { path: string; content: Buffer }[];

/** Every regular file under `dir` (relative POSIX paths); anything else is a problem. */
async function readFolder(dir: string): Promise<{ files: Files; problems: string[] }> {
  const files: Files = [];
  const problems: string[] = [];
  for (const d of await readdir(dir, { recursive: true, withFileTypes: true })) {
    const abs = join(d.parentPath, d.name);
    const rel = relative(dir, abs).split(sep).join('/');
    if (d.isDirectory()) continue;
    if (d.isFile()) files.push({ path: rel, content: await readFile(abs) });
    else problems.push(`${rel}: not a regular file`);
  }
  return { files, problems };
}

const isFolderArg = (arg: string) => arg.includes('/') || arg.includes(sep) || arg.startsWith('.') || arg.startsWith('~');

async function judge(keys: readonly SkillKey[], c: Omit<Checked, 'signature' | 'ok'>, seal: Seal | null, problems: string[]): Promise<Checked> {
  const signature = seal ? { kid: seal.signature.kid, check: checkSignature(seal.digest, seal.signature, keys) } : null;
  const ok = !!seal && seal.digest === c.digest && signature?.check === 'valid' && problems.length === 0;
  return { ...c, expected: seal?.digest ?? null, signature, ok, changes: [...problems, ...c.changes] };
}

/** The lockfile entry (project's, then the home folder's) that records `dir`. */
async function entryFor(dir: string): Promise<LockEntry | undefined> {
  for (const root of [process.cwd(), homedir()]) {
    const found = (await readLock(root))?.skills.find((e) => absDir(root, e.dir) === dir);
    if (found) return found;
  }
  return undefined;
}

async function checkFolder(api: Api, keys: readonly SkillKey[], dir: string, entry: LockEntry | undefined): Promise<Checked> {
  if (!(await lstat(dir).then((s) => s.isDirectory(), () => false))) {
    return { slug: entry?.slug ?? null, version: entry?.version ?? null, dir, digest: '', expected: null, signature: null, ok: false, changes: ['the folder is missing'] };
  }
  const { files, problems } = await readFolder(dir);
  const digest = bundleDigest(files);
  const changes = entry ? treeChanges(entry.files, await hashTree(dir)) : [];
  if (entry) {
    const skill = await getSkill(api, entry.slug);
    const seal = await fetchSeal(api, skill.id, entry.version);
    if (entry.digest && entry.digest !== seal.digest) changes.push(`the marketplace now has ${seal.digest} for this version; the lockfile recorded ${entry.digest}`);
    return judge(keys, { slug: entry.slug, version: entry.version, dir, digest, expected: null, changes }, seal, problems);
  }
  // not in a lockfile: the skill named in SKILL.md, and the version whose digest these files have
  const md = files.find((f) => f.path === 'SKILL.md');
  const name = md ? parseFrontMatter(md.content.toString('utf8')).data?.name : undefined;
  if (typeof name !== 'string') throw new CliError(`${shownPath(dir)} has no SKILL.md with a name, and no lockfile records it`, 'pass the skill instead: agw skill verify SLUG', 'NOT_A_SKILL');
  const skill = await getSkill(api, name);
  const versions = await api.get<PublicVersionsT>(`/skills/${skill.id}/public-versions`, { auth: 'optional' });
  const match = versions.versions.find((v) => v.digest === digest);
  const seal = match ? await fetchSeal(api, skill.id, match.version) : null;
  return judge(keys, { slug: skill.slug, version: match?.version ?? null, dir, digest, expected: null, changes: match ? [] : ['no version of the skill has these files'] }, seal, problems);
}

async function checkDownload(api: Api, keys: readonly SkillKey[], skill: SkillT, version: string): Promise<Checked> {
  const seal = await fetchSeal(api, skill.id, version);
  const files = await readTarGz(await download(api, `/skills/${skill.id}/versions/${encodeURIComponent(version)}`));
  return judge(keys, { slug: skill.slug, version, dir: null, digest: bundleDigest(files), expected: null, changes: [] }, seal, []);
}

export async function verify(arg: string, opts: VerifyOpts): Promise<void> {
  const api = await Api.open(opts);
  const keys = await fetchKeys(api);
  const items: Checked[] = [];
  if (isFolderArg(arg)) {
    const dir = resolve(arg.replace(/^~(?=$|\/)/, homedir()));
    items.push(await checkFolder(api, keys, dir, await entryFor(dir)));
  } else {
    const [slug, version, ...rest] = arg.split('@');
    if (!slug || rest.length > 0 || version === '') throw new UsageError(`not a skill or folder: ${arg}`, 'agw skill verify SLUG, SLUG@VERSION or ./FOLDER');
    const root = rootOf(opts.global);
    const entries = ((await readLock(root))?.skills ?? []).filter((e) => e.slug === slug && (version === undefined || e.version === version));
    for (const e of entries) items.push(await checkFolder(api, keys, absDir(root, e.dir), e));
    if (entries.length === 0) {
      const skill = await getSkill(api, slug);
      const wanted = version ?? skill.currentVersion;
      if (!wanted) throw new CliError(`${slug} has no published version`, undefined, 'VERSION_NOT_FOUND');
      items.push(await checkDownload(api, keys, skill, wanted));
    }
  }
  if (!items.every((i) => i.ok)) process.exitCode = 1;
  if (opts.json) return printJson({ ok: items.every((i) => i.ok), items });
  for (const i of items) {
    const what = `${i.slug ?? '?'} ${i.version ?? '?'} ${i.dir ? shownPath(i.dir) : '(downloaded)'}`;
    if (i.ok) {
      process.stdout.write(`${green('ok')} ${bold(what)}: ${i.digest}, signed by ${i.signature!.kid}\n`);
      continue;
    }
    const why = [
      ...(i.expected && i.expected !== i.digest ? [`digest ${i.digest || '(none)'} is not the signed ${i.expected}`] : []),
      ...(i.signature && i.signature.check !== 'valid' ? [`the signature ${i.signature.check === 'unknown-key' ? `names a key the daemon does not publish (${i.signature.kid})` : `does not verify with key ${i.signature.kid}`}`] : []),
      ...i.changes.slice(0, 5),
    ];
    process.stdout.write(`${red('FAILED')} ${bold(what)}: ${why.join('; ')}\n`);
  }
}
