import { readFileSync } from 'node:fs';
import { readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { MAX_FILE_BYTES, SKILL_MD, isToolManifestPath, type BundleEntry } from '../../shared/bundle/index.js';

/**
 * A bundle file received by publish, before it is stored: either spooled to a temp file
 * (multipart) or held in memory (JSON body). `size` above MAX_FILE_BYTES means the file
 * was cut off at the limit (its bytes are not kept).
 */
export interface StagedFile {
  path: string;
  size: number;
  sha256: string;
  tmpFile?: string;
  data?: Buffer;
}

export interface StagedUpload {
  files: StagedFile[];
  /** Temp directory to remove when the request ends (multipart only). */
  dir?: string;
}

export function stageBuffer(path: string, data: Buffer): StagedFile {
  return { path, size: data.length, sha256: createHash('sha256').update(data).digest('hex'), data };
}

/** The file's bytes (one file at a time; never the whole bundle). */
export async function stagedBytes(f: StagedFile): Promise<Buffer> {
  if (f.data) return f.data;
  if (!f.tmpFile) throw new Error(`staged file ${f.path} has no content`);
  return readFile(f.tmpFile);
}

/**
 * Bundle entries for the validator. The validator reads content only of SKILL.md and tool
 * manifests; for spooled files that content is read from disk when the validator asks,
 * so no more than one file is in memory at a time.
 */
export function toBundleEntries(files: readonly StagedFile[]): BundleEntry[] {
  return files.map((f) => {
    const entry: BundleEntry = { path: f.path, size: f.size, kind: 'file' };
    if (f.size > MAX_FILE_BYTES) return entry;
    if (f.data) return { ...entry, content: f.data };
    const tmp = f.tmpFile;
    if (tmp && (f.path === SKILL_MD || isToolManifestPath(f.path))) {
      Object.defineProperty(entry, 'content', { enumerable: true, get: () => readFileSync(tmp) });
    }
    return entry;
  });
}

export async function discardStaged(upload: StagedUpload | undefined): Promise<void> {
  if (upload?.dir) await rm(upload.dir, { recursive: true, force: true });
}

/** Removes upload directories left behind by a crash (older than `maxAgeMs`). */
export async function sweepStale(root: string, maxAgeMs = 60 * 60 * 1000): Promise<void> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  const now = Date.now();
  for (const e of entries) {
    const dir = join(root, e.name);
    const st = await stat(dir).catch(() => undefined);
    if (st && now - st.mtimeMs > maxAgeMs) await rm(dir, { recursive: true, force: true });
  }
}
