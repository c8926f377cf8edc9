import { Readable, pipeline } from 'node:stream';
import { createGzip } from 'node:zlib';
import { Header, Pax } from 'tar';
import type { Queryable } from '../store/db.js';
import { getBlob } from '../store/blobs.js';
import type { ManifestEntry } from '../store/skills.js';

const BLOCK = 512;

/**
 * The tar header blocks of one regular file: a PAX extended header (carrying the full
 * path when it is long or non-ASCII, and the file's sha256 as `comment=sha256:<hex>` so
 * an installer can verify every file without the owner-only file list), then the ustar block.
 */
export function fileHeader(path: string, size: number, mtime: Date, sha256: string): Buffer {
  const data = { path, size, mode: 0o644, mtime, type: 'File' as const, uid: 0, gid: 0, uname: '', gname: '' };
  const block = Buffer.alloc(BLOCK);
  new Header(data).encode(block, 0);
  return Buffer.concat([new Pax({ ...data, comment: `sha256:${sha256}` }).encode(), block]);
}

async function* tarBlocks(q: Queryable, files: readonly ManifestEntry[], mtime: Date): AsyncGenerator<Buffer> {
  for (const f of files) {
    const data = await getBlob(q, f.sha256);
    if (!data) throw new Error(`blob ${f.sha256} of ${f.path} is missing`);
    yield fileHeader(f.path, data.length, mtime, f.sha256);
    yield data;
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(BLOCK * 2); // end of archive
}

/**
 * A version's bundle as a gzip'd tar stream, files at the archive root as listed in the
 * manifest; blobs are read from the store one at a time while the client consumes.
 */
export function bundleStream(q: Queryable, files: readonly ManifestEntry[], mtime: Date): Readable {
  // pipeline destroys the gzip stream (and so the response) if a blob cannot be read
  return pipeline(Readable.from(tarBlocks(q, files, mtime)), createGzip(), () => {});
}
