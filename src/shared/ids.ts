import { randomBytes } from 'node:crypto';

/** A short random identifier with a readable prefix, e.g. `usr_3f9a1c0b2d4e6f80`. */
export function newId(prefix: string, bytes = 8): string {
  return `${prefix}_${randomBytes(bytes).toString('hex')}`;
}

/** A high-entropy opaque secret (URL-safe). */
export function newSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
