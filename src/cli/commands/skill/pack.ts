/**
 * `agw skill pack [DIR]`: a reproducible .tgz of the bundle. Entries are the validated file
 * list in sorted order; `portable` drops uid/gid/uname/atime/ctime and fixes the gzip
 * header; every mtime is 2000-01-01. Two packs of the same tree are byte-identical.
 */
import { createHash } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { packFileName } from '../../../shared/bundle/index.js';
import { CliError, UsageError } from '../../errors.js';
import { dim, printJson } from '../../output.js';
import { formatProblem, loadBundle, printWarnings, type LocalBundle } from './bundle.js';

export const PACK_MTIME = new Date('2000-01-01T00:00:00Z');

/** The gzip'd tar of the bundle's regular files, in memory. */
export async function packBundle(b: LocalBundle): Promise<Buffer> {
  const { Pack } = await import('tar');
  const pack = new Pack({ cwd: b.dir, gzip: true, portable: true, mtime: PACK_MTIME, noDirRecurse: true, strict: true });
  const chunks: Buffer[] = [];
  const done = new Promise<void>((ok, fail) => {
    pack.on('data', (c: Buffer) => chunks.push(c));
    pack.on('end', () => ok());
    pack.on('error', fail);
  });
  for (const e of b.entries) if (e.kind === 'file') pack.add(e.path);
  pack.end();
  await done;
  return Buffer.concat(chunks);
}

/** Refuse to pack or publish a bundle the marketplace would reject; problems go to stderr. */
export function assertValid(b: LocalBundle): void {
  for (const p of b.validation.problems) process.stderr.write(formatProblem(b.dir, p) + '\n');
  printWarnings(b);
  if (b.validation.ok) return;
  const n = b.validation.problems.length;
  throw new CliError(`the bundle has ${n} problem${n === 1 ? '' : 's'}`, 'fix them and run agw skill validate again', 'INVALID_BUNDLE');
}

export async function pack(dirArg: string | undefined, opts: { out?: string; json?: boolean }): Promise<void> {
  const bundle = await loadBundle(dirArg);
  assertValid(bundle);
  const name = bundle.validation.meta!.name;
  const file = resolve(opts.out ?? packFileName(name));
  // NAME.tgz at the bundle's root is left out of every pack and publish (read-dir.ts); any other file written into the bundle would ship with the next publish
  const own = resolve(bundle.dir, packFileName(name));
  if (file !== own && file.startsWith(bundle.dir + sep)) {
    throw new UsageError(
      `${relative(process.cwd(), file)} is inside the skill folder, so the next publish would ship it`,
      `write it outside the folder (-o ../${packFileName(name)}), or as ${packFileName(name)} at the folder's root, which agw always leaves out`,
    );
  }
  const tgz = await packBundle(bundle);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, tgz);
  await rename(tmp, file);
  const sha256 = createHash('sha256').update(tgz).digest('hex');
  const files = bundle.entries.filter((e) => e.kind === 'file').length;
  if (opts.json) {
    printJson({ file, name: bundle.validation.meta!.name, files, bytes: tgz.length, sha256 });
    return;
  }
  process.stdout.write(`packed ${files} files into ${relative(process.cwd(), file)} (${tgz.length} bytes)\n${dim(`sha256 ${sha256}`)}\n`);
}
