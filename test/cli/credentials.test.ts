import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeEach, describe, expect, test, vi } from 'vitest';

/** The keyring seam of credentials.ts, with a fake keyring (the test machine has none). */
const keyring = vi.hoisted(() => ({ store: new Map<string, string>(), broken: false, forgetful: false }));
vi.mock('@napi-rs/keyring', () => ({
  Entry: class {
    constructor(
      private service: string,
      private account: string,
    ) {}
    private get id() {
      if (keyring.broken) throw new Error("Couldn't access platform storage: AccessDenied");
      return `${this.service}/${this.account}`;
    }
    /** what a forgetful keyring (kernel keyutils without a session) keeps: this object only */
    private own: string | null = null;
    getPassword() {
      return this.own ?? keyring.store.get(this.id) ?? null;
    }
    setPassword(p: string) {
      if (keyring.forgetful) this.own = p;
      else keyring.store.set(this.id, p);
    }
    deletePassword() {
      return keyring.store.delete(this.id);
    }
  },
}));

const { deleteCredentials, loadCredentials, saveCredentials, credentialsFile, heldByKernelKeyring } = await import('../../src/cli/credentials.js');

const dir = mkdtempSync(join(tmpdir(), 'agw-cred-'));
const saved = { ...process.env };
beforeEach(() => {
  keyring.store.clear();
  keyring.broken = false;
  keyring.forgetful = false;
  process.env.AGW_CONFIG_DIR = join(dir, String(Math.random()).slice(2));
  delete process.env.AGW_NO_KEYRING;
});
afterAll(() => {
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
});

describe('credentials', () => {
  test('go to the OS keyring (service agw, account = profile) when there is one; no file is written', async () => {
    expect(await saveCredentials('work', { apiKey: 'agw_k1' })).toBe('keyring');
    expect(JSON.parse(keyring.store.get('agw/work')!)).toEqual({ apiKey: 'agw_k1' });
    expect(existsSync(credentialsFile())).toBe(false);
    expect(await loadCredentials('work')).toEqual({ creds: { apiKey: 'agw_k1' }, store: 'keyring' });
    expect(await deleteCredentials('work')).toBe(true);
    expect(await loadCredentials('work')).toEqual({ creds: {}, store: null });
  });

  test('fall back to a 0600 file with a one-line notice when the keyring fails, and are read back from it', async () => {
    keyring.broken = true;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let notices: string[];
    try {
      expect(await saveCredentials('default', { apiKey: 'agw_k2' })).toBe('file');
      expect(await saveCredentials('other', { apiKey: 'agw_k3' })).toBe('file');
    } finally {
      notices = stderr.mock.calls.map((c) => String(c[0]));
      stderr.mockRestore();
    }
    expect(notices).toEqual([`notice: no OS keyring available; credentials saved to ${credentialsFile()} (mode 0600)\n`]);
    expect(statSync(credentialsFile()).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(credentialsFile(), 'utf8')).profiles.default).toEqual({ apiKey: 'agw_k2' });
    expect(await loadCredentials('default')).toEqual({ creds: { apiKey: 'agw_k2' }, store: 'file' });
    expect(await deleteCredentials('default')).toBe(true);
    expect(Object.keys(JSON.parse(readFileSync(credentialsFile(), 'utf8')).profiles)).toEqual(['other']);
  });

  test('moving to a working keyring removes the profile from the file', async () => {
    keyring.broken = true;
    vi.spyOn(process.stderr, 'write').mockImplementationOnce(() => true);
    await saveCredentials('default', { apiKey: 'agw_old' });
    keyring.broken = false;
    expect(await saveCredentials('default', { apiKey: 'agw_new' })).toBe('keyring');
    expect(JSON.parse(readFileSync(credentialsFile(), 'utf8')).profiles).toEqual({});
    expect(await loadCredentials('default')).toEqual({ creds: { apiKey: 'agw_new' }, store: 'keyring' });
  });

  test('a keyring that accepts a write no fresh entry can read back is not trusted: the file keeps the credential, with a notice saying why', async () => {
    keyring.forgetful = true;
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    stderr.mockClear();
    try {
      expect(await saveCredentials('default', { apiKey: 'agw_k1' })).toBe('file');
      expect(String(stderr.mock.calls[0][0])).toMatch(/^notice: the OS keyring does not keep secrets past this process/);
    } finally {
      stderr.mockRestore();
    }
    expect(await loadCredentials('default')).toEqual({ creds: { apiKey: 'agw_k1' }, store: 'file' });
  });

  test('a second login never drops the stored credential when the keyring does not keep the new one (the issue: login twice, logged out)', async () => {
    keyring.broken = true; // the first login: the keyring refuses, the file takes it
    vi.spyOn(process.stderr, 'write').mockImplementationOnce(() => true);
    expect(await saveCredentials('default', { apiKey: 'agw_first' })).toBe('file');
    keyring.broken = false;
    keyring.forgetful = true; // the second: the keyring accepts the write and forgets it
    const { creds } = await loadCredentials('default');
    expect(await saveCredentials('default', { ...creds, apiKey: 'agw_second' })).toBe('file');
    expect(JSON.parse(readFileSync(credentialsFile(), 'utf8')).profiles.default).toEqual({ apiKey: 'agw_second' });
    expect(await loadCredentials('default')).toEqual({ creds: { apiKey: 'agw_second' }, store: 'file' });
  });

  test.runIf(process.platform === 'linux')('a kernel keyutils key (what the keyring falls back to on headless Linux) is recognised in /proc/keys', () => {
    const procKeys = join(dir, 'proc-keys');
    writeFileSync(
      procKeys,
      [
        '04ff7a80 I--Q---     1 perm 1f3f0000     0 65534 keyring   _uid_ses.0: 2',
        '10b1af1c I--Q---     1 perm 3f010000     0     0 user      keyring:work@agw: 24',
        '21b2999f I--Q---     1 perm 3f010000     0     0 user      keyring:homework@agw-test: 2',
      ].join('\n'),
    );
    expect(heldByKernelKeyring('work', procKeys)).toBe(true);
    expect(heldByKernelKeyring('homework', procKeys)).toBe(false);
    expect(heldByKernelKeyring('default', procKeys)).toBe(false);
    expect(heldByKernelKeyring('work', join(dir, 'missing'))).toBe(false);
  });
});
