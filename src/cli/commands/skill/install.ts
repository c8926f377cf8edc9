/**
 * `agw skill install SKILL`: install into the account, download the version's bundle,
 * check every file's sha256 against the digest the server declared for it in the archive
 * (and, for the owner, against the version's file list) in memory, write it to a temp
 * folder next to the target and rename it into place, so nothing is ever half-written.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import type { InstallResultT } from '../../../shared/schemas/skills.js';
import { Api } from '../../api.js';
import type { GlobalOpts } from '../../auth.js';
import { CliError } from '../../errors.js';
import { usd } from '../../format.js';
import { bold, printJson } from '../../output.js';
import { readTarGz, verifyDeclared, verifyFiles, type ExtractedFile, type ListedFile } from './extract.js';
import { getSkill } from './resolve.js';

const exists = (p: string) => stat(p).then(() => true, () => false);

async function writeTree(dir: string, files: readonly ExtractedFile[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const f of files) {
    const file = join(dir, f.path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, f.content, { mode: f.executable ? 0o755 : 0o644, flag: 'wx' });
  }
}

/** Put `tmp` at `target` (replacing what is there when `force`). */
async function swapIn(tmp: string, target: string, force: boolean): Promise<void> {
  if (!(await exists(target))) return rename(tmp, target);
  if (!force) throw new CliError(`${target} already exists`, 'pass --force to replace it', 'DIR_EXISTS');
  const old = `${tmp}-old`;
  await rename(target, old);
  await rename(tmp, target);
  await rm(old, { recursive: true, force: true });
}

/**
 * The version's file list with sha256 (GET …/files). The spec makes it owner-only, so an
 * installer gets 403 and null: then the gzip CRC and the tar header checksums are all there is.
 */
async function fileList(api: Api, base: string): Promise<ListedFile[] | null> {
  try {
    return (await api.get<{ files: ListedFile[] }>(`${base}/files`)).files;
  } catch (e) {
    if ((e as { status?: number }).status === 403) return null;
    throw e;
  }
}

export async function install(ref: string, opts: GlobalOpts & { dir?: string; force?: boolean }): Promise<void> {
  const api = await Api.open(opts);
  const skill = await getSkill(api, ref);
  const target = resolve(opts.dir ?? join('.agw', 'skills', skill.slug));
  const shown = relative(process.cwd(), target) || '.';
  if (!opts.force && (await exists(target))) throw new CliError(`${shown} already exists`, 'pass --force to replace it, or --dir to pick another folder', 'DIR_EXISTS');

  const result = await api.json<InstallResultT>('POST', `/skills/${skill.id}/install`);
  const base = `/skills/${skill.id}/versions/${encodeURIComponent(result.version)}`;
  const listed = await fileList(api, base);
  const res = await api.send('GET', `${base}/bundle`, { headers: { accept: 'application/gzip' }, timeoutMs: 5 * 60_000 });
  const files = await readTarGz(Buffer.from(await res.arrayBuffer()));
  // The owner can also check against the version's file list (nothing missing, nothing extra).
  verifyDeclared(files);
  if (listed) verifyFiles(files, listed);

  await mkdir(dirname(target), { recursive: true });
  const tmp = join(dirname(target), `.${basename(target)}.agw-${randomBytes(4).toString('hex')}`);
  try {
    await writeTree(tmp, files);
    await swapIn(tmp, target, Boolean(opts.force));
  } catch (e) {
    await rm(tmp, { recursive: true, force: true });
    throw e;
  }
  if (opts.json) {
    const sums = listed ?? files.map((f) => ({ path: f.path, size: f.content.length, sha256: createHash('sha256').update(f.content).digest('hex') }));
    return printJson({ ...result, slug: skill.slug, dir: target, verified: 'sha256', files: sums });
  }
  const paid = result.charged > 0 ? `, charged ${usd(result.charged)}` : result.alreadyInstalled ? ', already owned' : '';
  process.stdout.write(`installed ${bold(skill.slug)} ${result.version} into ${shown} (${files.length} files${paid})\n`);
}
