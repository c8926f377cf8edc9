import type { KeyLimits } from '../store/keys.js';

/** A valid agw_ key's principal (the `key` kind of Principal below; auth/key-cache.ts makes it). */
export interface KeyPrincipal {
  readonly kind: 'key';
  readonly keyId: string;
  readonly userId: string;
  readonly tier: string;
  /** the store version the key was checked at (see `verifyKeyCached`) */
  readonly storeVersion?: number;
  /** the key's limits (money/key-limits.ts); null when it has none, so an unlimited key costs nothing extra */
  readonly limits: KeyLimits | null;
  /** epoch ms; null = never. An expired key is answered 401 KEY_EXPIRED (`expiredKeyError`). */
  readonly expiresAt: number | null;
  /**
   * The limits of the keys this one was made with (POST /api/keys with a limited key),
   * nearest first; absent for other keys. Its own limits always fit inside each of them;
   * a call of it also spends from theirs.
   */
  readonly ancestors?: readonly { readonly keyId: string; readonly limits: KeyLimits }[];
}

/** Who is calling. */
export type Principal =
  /** storeVersion: the SQLite store's version the key was checked at (a call's admission is linearized there); limits, expiry */
  | KeyPrincipal
  | { kind: 'oauth'; userId: string; tier: string; scopes: string[]; clientId: string }
  | { kind: 'session'; userId: string; tier: string; sessionId: string; csrfToken: string }
  | { kind: 'master' };

export type UserPrincipal = Exclude<Principal, { kind: 'master' }>;
export type CredentialKind = Principal['kind'];
