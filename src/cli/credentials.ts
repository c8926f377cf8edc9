/**
 * Secrets per profile: an agw_ key, OAuth tokens and/or a portal session cookie. They go
 * to the OS keyring (`@napi-rs/keyring`, service "agw", account = profile) when it keeps
 * them, else to `credentials.json` under the config directory, mode 0600 in a 0700
 * directory, with a one-line notice when it is created (headless Linux, CI,
 * `AGW_NO_KEYRING=1`).
 *
 * "Keeps them" is checked, not assumed: on Linux without a Secret Service the library
 * falls back to the kernel's keyutils session keyring, which accepts a write and answers
 * reads in this process (and its children, which inherit the session keyring: a child
 * process reading it back proves nothing, and costs ~200 ms), yet a later `agw` started
 * from the shell sees nothing. So a keyring write counts only when a fresh entry reads the
 * same secret back and, on Linux, the entry is not a kernel key (listed in /proc/keys).
 * Otherwise the file is used. The file is written before anything is removed from the
 * keyring, and the keyring copy is verified before the file's copy is removed: a failed
 * save never loses the credential that was there.
 */
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Entry } from '@napi-rs/keyring';
import { configDir, ensureConfigDir, readJsonFile, writeJsonFile } from './profiles.js';

export interface OAuthTokens {
  accessToken: string;
  refreshToken?: string;
  /** epoch ms */
  expiresAt: number;
  scope?: string;
}

export interface PortalSession {
  /** value of the service_session cookie */
  cookie: string;
  email?: string;
  /** epoch ms, when the server said */
  expiresAt?: number;
}

export interface Credentials {
  apiKey?: string;
  oauth?: OAuthTokens;
  session?: PortalSession;
}

export type CredentialStore = 'keyring' | 'file';

interface CredentialsFile {
  version: 1;
  profiles: Record<string, Credentials>;
}

const SERVICE = 'agw';
export const credentialsFile = (): string => join(configDir(), 'credentials.json');

const keyringDisabled = () => process.env.AGW_NO_KEYRING === '1' || process.env.AGW_NO_KEYRING === 'true';

/** The keyring entry of a profile, or null when the keyring is disabled or cannot load. */
async function keyringEntry(profile: string): Promise<Entry | null> {
  if (keyringDisabled()) return null;
  try {
    const { Entry } = await import('@napi-rs/keyring');
    return new Entry(SERVICE, profile);
  } catch {
    return null;
  }
}

/**
 * Linux: whether the profile's entry is a kernel keyutils key (the library's fallback
 * without a Secret Service), which does not outlive the session keyring of this process.
 * /proc/keys lists the keys this user may view as `… user keyring:PROFILE@agw: LEN`.
 */
export function heldByKernelKeyring(profile: string, procKeys = '/proc/keys'): boolean {
  if (process.platform !== 'linux') return false;
  let text: string;
  try {
    text = readFileSync(procKeys, 'utf8');
  } catch {
    return false;
  }
  const id = `${profile}@${SERVICE}: `;
  return text.split('\n').some((l) => / user +/.test(l) && (l.includes(` ${id}`) || l.includes(`:${id}`)));
}

/** Writes `secret` to the keyring: `kept` only when it is there for the next process too. */
async function storeInKeyring(entry: Entry, profile: string, secret: string): Promise<'kept' | 'lost' | 'failed'> {
  try {
    entry.setPassword(secret);
  } catch {
    return 'failed'; // no platform storage
  }
  try {
    const { Entry: Fresh } = await import('@napi-rs/keyring');
    return new Fresh(SERVICE, profile).getPassword() === secret && !heldByKernelKeyring(profile) ? 'kept' : 'lost';
  } catch {
    return 'lost';
  }
}

function forgetKeyringEntry(entry: Entry | null): void {
  try {
    entry?.deletePassword();
  } catch {
    // nothing there
  }
}

function readFileStore(): CredentialsFile {
  const f = readJsonFile<Partial<CredentialsFile>>(credentialsFile());
  return { version: 1, profiles: f?.profiles && typeof f.profiles === 'object' ? f.profiles : {} };
}

function writeFileStore(store: CredentialsFile, why = 'no OS keyring available'): void {
  const file = credentialsFile();
  const fresh = !existsSync(file);
  ensureConfigDir();
  writeJsonFile(file, store, 0o600);
  chmodSync(file, 0o600);
  if (fresh) process.stderr.write(`notice: ${keyringDisabled() ? 'keyring disabled by AGW_NO_KEYRING' : why}; credentials saved to ${file} (mode 0600)\n`);
}

const isEmpty = (c: Credentials) => !c.apiKey && !c.oauth && !c.session;

/**
 * A profile's credentials: the file's when it holds the profile (a save goes there only
 * when the keyring did not keep the secret, so the file is then the newer copy), else the
 * keyring's.
 */
export async function loadCredentials(profile: string): Promise<{ creds: Credentials; store: CredentialStore | null }> {
  const inFile = readFileStore().profiles[profile];
  if (inFile && !isEmpty(inFile)) return { creds: inFile, store: 'file' };
  const entry = await keyringEntry(profile);
  if (entry) {
    try {
      const raw = entry.getPassword();
      if (raw) return { creds: JSON.parse(raw) as Credentials, store: 'keyring' };
    } catch {
      // keyring unavailable or entry unreadable
    }
  }
  return { creds: {}, store: null };
}

/**
 * Store (replace) a profile's credentials; returns where they went. The keyring when it
 * verifiably keeps them (then the profile leaves the file), else the file (then a keyring
 * entry that would not last is removed, after the file holds the new credentials).
 */
export async function saveCredentials(profile: string, creds: Credentials): Promise<CredentialStore> {
  if (isEmpty(creds)) {
    await deleteCredentials(profile);
    return 'file';
  }
  const entry = await keyringEntry(profile);
  const outcome = entry ? await storeInKeyring(entry, profile, JSON.stringify(creds)) : 'failed';
  if (outcome === 'kept') {
    removeFromFile(profile);
    return 'keyring';
  }
  const store = readFileStore();
  store.profiles[profile] = creds;
  writeFileStore(store, outcome === 'lost' ? 'the OS keyring does not keep secrets past this process (no Secret Service)' : undefined);
  forgetKeyringEntry(entry);
  return 'file';
}

function removeFromFile(profile: string): boolean {
  if (!existsSync(credentialsFile())) return false;
  const store = readFileStore();
  if (!(profile in store.profiles)) return false;
  delete store.profiles[profile];
  writeFileStore(store);
  return true;
}

/** Forget a profile's credentials everywhere; true when something was removed. */
export async function deleteCredentials(profile: string): Promise<boolean> {
  let removed = false;
  const entry = await keyringEntry(profile);
  if (entry) {
    try {
      removed = Boolean(entry.getPassword());
      if (removed) entry.deletePassword();
    } catch {
      // nothing in the keyring
    }
  }
  return removeFromFile(profile) || removed;
}
