/**
 * Secrets per profile: an agw_ key, OAuth tokens and/or a portal session cookie. They go
 * to the OS keyring (`@napi-rs/keyring`, service "agw", account = profile); when there is
 * none (headless Linux, CI, `AGW_NO_KEYRING=1`) to `credentials.json` under the config
 * directory, mode 0600 in a 0700 directory, with a one-line notice when it is created.
 */
import { chmodSync, existsSync } from 'node:fs';
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

/** The keyring entry of a profile, or null when the keyring is disabled or cannot load. */
async function keyringEntry(profile: string): Promise<Entry | null> {
  if (process.env.AGW_NO_KEYRING === '1' || process.env.AGW_NO_KEYRING === 'true') return null;
  try {
    const { Entry } = await import('@napi-rs/keyring');
    return new Entry(SERVICE, profile);
  } catch {
    return null;
  }
}

function readFileStore(): CredentialsFile {
  const f = readJsonFile<Partial<CredentialsFile>>(credentialsFile());
  return { version: 1, profiles: f?.profiles && typeof f.profiles === 'object' ? f.profiles : {} };
}

function writeFileStore(store: CredentialsFile): void {
  const file = credentialsFile();
  const fresh = !existsSync(file);
  ensureConfigDir();
  writeJsonFile(file, store, 0o600);
  chmodSync(file, 0o600);
  if (fresh) {
    const why = process.env.AGW_NO_KEYRING ? 'keyring disabled by AGW_NO_KEYRING' : 'no OS keyring available';
    process.stderr.write(`notice: ${why}; credentials saved to ${file} (mode 0600)\n`);
  }
}

const isEmpty = (c: Credentials) => !c.apiKey && !c.oauth && !c.session;

export async function loadCredentials(profile: string): Promise<{ creds: Credentials; store: CredentialStore | null }> {
  const entry = await keyringEntry(profile);
  if (entry) {
    try {
      const raw = entry.getPassword();
      if (raw) return { creds: JSON.parse(raw) as Credentials, store: 'keyring' };
    } catch {
      // keyring unavailable or entry unreadable: fall through to the file
    }
  }
  const creds = readFileStore().profiles[profile];
  return creds && !isEmpty(creds) ? { creds, store: 'file' } : { creds: {}, store: null };
}

/** Store (replace) a profile's credentials; returns where they went. */
export async function saveCredentials(profile: string, creds: Credentials): Promise<CredentialStore> {
  if (isEmpty(creds)) {
    await deleteCredentials(profile);
    return 'file';
  }
  const entry = await keyringEntry(profile);
  if (entry) {
    try {
      entry.setPassword(JSON.stringify(creds));
      removeFromFile(profile);
      return 'keyring';
    } catch {
      // no platform storage: use the file
    }
  }
  const store = readFileStore();
  store.profiles[profile] = creds;
  writeFileStore(store);
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
