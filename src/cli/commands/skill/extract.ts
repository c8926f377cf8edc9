/**
 * Reading a downloaded bundle (gzip tar) into memory, never onto disk: only regular files
 * with safe relative paths (the shared path rules), within the bundle limits.
 */
import { createHash } from 'node:crypto';
import { MAX_FILE_BYTES, MAX_FILES, checkCollisions, checkPath } from '../../../shared/bundle/index.js';
import { CliError } from '../../errors.js';

export interface ExtractedFile {
  path: string;
  content: Buffer;
  executable: boolean;
  /** The sha256 the server declared for this file (PAX `comment=sha256:<hex>`), if any. */
  declaredSha256?: string;
}

const REGULAR = new Set(['File', 'OldFile', 'ContiguousFile']);

export async function readTarGz(buf: Buffer): Promise<ExtractedFile[]> {
  const { Parser } = await import('tar');
  const files: ExtractedFile[] = [];
  const problems: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const parser = new Parser({ strict: true });
    parser.on('entry', (e) => {
      const path = e.type === 'Directory' ? e.path.replace(/\/+$/, '') : e.path;
      const bad = checkPath(path);
      if (bad.length > 0) problems.push(`${JSON.stringify(e.path)}: ${bad[0].message}`);
      else if (e.type === 'Directory') { /* directories are implied by the files */ }
      else if (!REGULAR.has(e.type)) problems.push(`${path}: ${e.type} entries are not allowed`);
      else if (files.length >= MAX_FILES) problems.push(`more than ${MAX_FILES} files`);
      else if (e.size > MAX_FILE_BYTES) problems.push(`${path}: larger than ${MAX_FILE_BYTES} bytes`);
      else {
        const chunks: Buffer[] = [];
        e.on('data', (c: Buffer) => chunks.push(c));
        const declared = /^sha256:([0-9a-f]{64})$/.exec(e.extended?.comment ?? '')?.[1];
        e.on('end', () =>
          files.push({ path, content: Buffer.concat(chunks), executable: ((e.mode ?? 0) & 0o111) !== 0, declaredSha256: declared }),
        );
        return;
      }
      e.resume();
    });
    parser.on('end', () => resolve());
    parser.on('error', (err: Error) => reject(new CliError(`the downloaded bundle is not a valid tar.gz: ${err.message}`, 'retry the install', 'BAD_BUNDLE')));
    parser.end(buf);
  });
  problems.push(...checkCollisions(files.map((f) => f.path)).map((p) => `${p.path}: ${p.message}`));
  if (problems.length > 0) {
    throw new CliError(`the downloaded bundle is unsafe: ${problems.slice(0, 5).join('; ')}`, 'nothing was written; report the skill', 'UNSAFE_BUNDLE');
  }
  return files;
}

export interface ListedFile {
  path: string;
  size: number;
  sha256: string;
}

/**
 * Every file's sha256 equals the digest the server declared for it in the archive; throws
 * when a digest is missing or differs. This is what an installer who is not the owner
 * (and so cannot read the file list) verifies.
 */
export function verifyDeclared(files: readonly ExtractedFile[]): void {
  const diffs: string[] = [];
  for (const f of files) {
    if (!f.declaredSha256) diffs.push(`${f.path}: no sha256 in the archive`);
    else if (createHash('sha256').update(f.content).digest('hex') !== f.declaredSha256) diffs.push(`${f.path}: sha256 mismatch`);
  }
  if (diffs.length > 0) {
    throw new CliError(`the bundle failed verification (${diffs.length}): ${diffs.slice(0, 5).join('; ')}`, 'nothing was written; retry the install', 'CHECKSUM_MISMATCH');
  }
}

/** Every listed file present with its size and sha256, and nothing else; throws listing the differences. */
export function verifyFiles(files: readonly ExtractedFile[], listed: readonly ListedFile[]): void {
  const want = new Map(listed.map((f) => [f.path, f]));
  const diffs: string[] = [];
  for (const f of files) {
    const w = want.get(f.path);
    if (!w) diffs.push(`${f.path}: not in the version's file list`);
    else if (createHash('sha256').update(f.content).digest('hex') !== w.sha256 || f.content.length !== w.size) diffs.push(`${f.path}: sha256 mismatch`);
    want.delete(f.path);
  }
  for (const path of want.keys()) diffs.push(`${path}: missing from the bundle`);
  if (diffs.length > 0) {
    throw new CliError(`the bundle does not match its file list (${diffs.length}): ${diffs.slice(0, 5).join('; ')}`, 'nothing was written; retry the install', 'CHECKSUM_MISMATCH');
  }
}
