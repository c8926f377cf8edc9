import type { Queryable } from './db.js';

/** Content-addressed file bytes (sha256 hex), shared by every version that holds the same content. */
export async function hasBlob(q: Queryable, sha256: string): Promise<boolean> {
  return (await q.get('SELECT 1 AS one FROM blobs WHERE sha256 = ?', [sha256])) !== undefined;
}

/** Stores a blob unless one with the same hash exists; true when it was new. */
export async function putBlob(q: Queryable, sha256: string, data: Buffer): Promise<boolean> {
  const r = await q.run('INSERT INTO blobs (sha256, size, data) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING', [
    sha256,
    data.length,
    data,
  ]);
  return r.changes > 0;
}

export async function getBlob(q: Queryable, sha256: string): Promise<Buffer | undefined> {
  const row = await q.get<{ data: Buffer | Uint8Array }>('SELECT data FROM blobs WHERE sha256 = ?', [sha256]);
  if (!row) return undefined;
  return Buffer.isBuffer(row.data) ? row.data : Buffer.from(row.data);
}
