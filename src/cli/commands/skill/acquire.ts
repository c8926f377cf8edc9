/**
 * Getting a version of a skill into memory, verified: read the version's digest, signature
 * and scan findings (a question when there are findings), install it into the account (POST
 * …/install; a paid skill only after the confirmation), download the version's bundle and
 * check every file's sha256 against the digest the server declared for it (and, for the
 * owner, against the version's file list), then the whole bundle against the version's
 * digest and the store's signature over it (trust.ts). Nothing is written to disk here.
 */
import { createHash } from 'node:crypto';
import { parseFrontMatter, checkSkillName } from '../../../shared/bundle/index.js';
import type { InstallResultT, PublicVersionsT, SkillT } from '../../../shared/schemas/skills.js';
import type { WalletT } from '../../../shared/schemas/wallet.js';
import type { Api } from '../../api.js';
import { CliError } from '../../errors.js';
import { confirmFindings, confirmPurchase } from './confirm.js';
import { assertSealed, fetchKeys, fetchSeal, type Seal } from './trust.js';
import { readTarGz, verifyDeclared, verifyFiles, type ExtractedFile, type ListedFile } from './extract.js';

export interface Acquired {
  skill: SkillT;
  version: string;
  /** The skill's front-matter `name`: the folder agents expect it in. */
  name: string;
  files: ExtractedFile[];
  /** Every file → sha256 (as the lockfile records it). */
  sums: Record<string, string>;
  result: InstallResultT;
  listed: ListedFile[] | null;
  /** The version's digest, signature (checked) and scan findings. */
  seal: Seal;
}

const isStatus = (e: unknown, status: number) => (e as { status?: number }).status === status;

/** The version's file list (owner only: others get 403 and null). */
async function fileList(api: Api, base: string): Promise<ListedFile[] | null> {
  try {
    return (await api.get<{ files: ListedFile[] }>(`${base}/files`)).files;
  } catch (e) {
    if (isStatus(e, 403)) return null;
    throw e;
  }
}

export async function download(api: Api, base: string): Promise<Buffer> {
  const res = await api.send('GET', `${base}/bundle`, { headers: { accept: 'application/gzip' }, timeoutMs: 5 * 60_000 });
  return Buffer.from(await res.arrayBuffer());
}

/**
 * Install `skill` into the account and fetch `wanted` (default: the current version). A paid
 * skill the account does not own yet is confirmed first (see confirm.ts); one it owns (the
 * bundle download is allowed) installs without a question, as repeat installs are free.
 */
export async function acquire(api: Api, skill: SkillT, wanted: string | undefined, yes: boolean | undefined, pinned?: { digest?: string }): Promise<Acquired> {
  const version = wanted ?? skill.currentVersion;
  if (!version) throw new CliError(`${skill.slug} has no published version`, undefined, 'VERSION_NOT_FOUND');
  const base = `/skills/${skill.id}/versions/${encodeURIComponent(version)}`;
  let tgz: Buffer | null = null;
  // a version asked for must be there before anything is installed or charged (an owner may fetch a draft)
  if (wanted !== undefined) tgz = await wantedVersion(api, skill, wanted, base);
  const seal = await fetchSeal(api, skill.id, version);
  if (pinned?.digest && pinned.digest !== seal.digest) {
    throw new CliError(
      `${skill.slug} ${version} is ${seal.digest} in the marketplace but the lockfile has ${pinned.digest}; nothing was written`,
      'the version was republished with other files: check it, then agw skill update to record what it is now',
      'LOCKFILE_MISMATCH',
    );
  }
  await confirmFindings({ slug: skill.slug, version }, seal.findings, yes);
  const keys = await fetchKeys(api);

  if (skill.price > 0 && !tgz) {
    try {
      tgz = await download(api, base); // allowed to owners and earlier buyers only
    } catch (e) {
      if (!isStatus(e, 403)) throw e;
      await confirmPurchase({ slug: skill.slug, version, price: skill.price }, () => api.get<WalletT>('/wallet'), yes);
    }
  }
  // the version asked for is the one recorded (and an archived one only for accounts that had it: 403 VERSION_ARCHIVED)
  const result = await api.json<InstallResultT>('POST', `/skills/${skill.id}/install`, { query: { version: wanted } });
  tgz ??= await download(api, base);
  const listed = await fileList(api, base);
  const files = await readTarGz(tgz);
  verifyDeclared(files);
  if (listed) verifyFiles(files, listed);
  assertSealed(`${skill.slug} ${version}`, files, seal, keys);

  const sums = Object.fromEntries(files.map((f) => [f.path, createHash('sha256').update(f.content).digest('hex')]));
  return { skill, version, name: frontMatterName(skill, files), files, sums, result, listed, seal };
}

/**
 * A version asked for with --version: null when it is published (the install goes on), its
 * bundle when the caller may fetch it anyway (an owner's draft); otherwise VERSION_NOT_FOUND
 * naming the skill and its versions, before anything was installed or charged.
 */
async function wantedVersion(api: Api, skill: SkillT, version: string, base: string): Promise<Buffer | null> {
  const v = await api.get<PublicVersionsT>(`/skills/${skill.id}/public-versions`, { auth: 'optional' });
  if (v.versions.some((x) => x.version === version)) return null;
  try {
    return await download(api, base);
  } catch (e) {
    if (!isStatus(e, 403) && !isStatus(e, 404)) throw e;
    // a version its owner withdrew is the server's to explain (403 VERSION_ARCHIVED names the current one)
    await api.get(`${base}/scan`, { auth: 'optional' }).catch((why: unknown) => {
      if ((why as { code?: string }).code === 'VERSION_ARCHIVED') throw why;
    });
    const listed = v.versions.map((x) => (x.isCurrent ? `${x.version} (current)` : x.version));
    throw new CliError(
      `skill ${skill.slug} has no published version ${version}; nothing was installed or charged`,
      listed.length ? `its versions: ${listed.join(', ')}; leave out --version for the current one` : `${skill.slug} has no published version yet`,
      'VERSION_NOT_FOUND',
    );
  }
}

/** The front-matter `name` of the downloaded SKILL.md (the marketplace validated it); the slug if it cannot be read. */
function frontMatterName(skill: SkillT, files: readonly ExtractedFile[]): string {
  const md = files.find((f) => f.path === 'SKILL.md');
  const name = md ? parseFrontMatter(md.content.toString('utf8')).data?.name : undefined;
  return typeof name === 'string' && checkSkillName(name) === null ? name : skill.slug;
}
