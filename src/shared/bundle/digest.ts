/**
 * A skill version's digest: `sha256:` + the lowercase hex SHA-256 of its files framed in one
 * unambiguous byte stream, so anyone holding the files can recompute it (docs/marketplace.md,
 * "Trust"). The files are taken in the order of their paths' UTF-8 bytes (unsigned, shortest
 * first on a common prefix: what `Buffer.compare` and C's `memcmp` give), and each adds
 *
 *     path as UTF-8 bytes, one NUL byte, the byte length in decimal ASCII, one NUL byte, the bytes
 *
 * to the stream. A path never holds a NUL (the bundle path rules refuse control characters),
 * and the length says where the bytes end, so no two different bundles frame alike.
 */
import { createHash, type Hash } from 'node:crypto';

export const DIGEST_PREFIX = 'sha256:';
export const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

const NUL = Buffer.from([0]);

/** Sorts paths by their UTF-8 bytes (not by UTF-16 code units, which differ above U+FFFF). */
export function byPathBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The framed stream, fed one file at a time in path order (checked: out of order throws). */
export class DigestBuilder {
  private readonly hash: Hash = createHash('sha256');
  private last: string | undefined;

  add(path: string, bytes: Uint8Array): this {
    if (this.last !== undefined && byPathBytes(this.last, path) >= 0) {
      throw new Error(`digest: file "${path}" comes after "${this.last}" (paths in UTF-8 byte order, each once)`);
    }
    this.last = path;
    this.hash.update(Buffer.from(path, 'utf8')).update(NUL).update(String(bytes.length), 'ascii').update(NUL).update(bytes);
    return this;
  }

  digest(): string {
    return DIGEST_PREFIX + this.hash.digest('hex');
  }
}

/** The digest of files held in memory (any order). */
export function bundleDigest(files: readonly { path: string; content: Uint8Array }[]): string {
  const b = new DigestBuilder();
  for (const f of [...files].sort((x, y) => byPathBytes(x.path, y.path))) b.add(f.path, f.content);
  return b.digest();
}

/** The digest of files read one at a time (a store's blobs, staged uploads): at most one file in memory. */
export async function bundleDigestOf<T extends { path: string }>(files: readonly T[], read: (f: T) => Promise<Uint8Array>): Promise<string> {
  const b = new DigestBuilder();
  for (const f of [...files].sort((x, y) => byPathBytes(x.path, y.path))) b.add(f.path, await read(f));
  return b.digest();
}
