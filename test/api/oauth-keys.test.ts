import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { startDaemon, type Daemon } from '../../src/daemon/serve.js';
import { rotateSigningKey } from '../../src/daemon/oauth/keys.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { runCli } from '../helpers/cli.js';
import { usePostgres } from '../helpers/pg.js';
import { authParams, exchange, getCode, oauthFixture, pkce, type OAuthFixture } from '../helpers/oauth.js';

/**
 * Signing keys: generated on first start, kept in the store, shared by daemons on one
 * store, rotated with `agw admin oauth rotate-keys` without breaking tokens still valid.
 * (Needs the built CLI: npm run build.)
 */
describe('OAuth signing keys and rotation', () => {
  const ISSUER = 'http://agw.test';
  let d: TestDaemon;
  let second: Daemon;
  let fx: OAuthFixture;

  beforeAll(async () => {
    d = await startTestDaemon({ yaml: `publicUrl: ${ISSUER}\n` });
    // a second daemon on the same store and public URL: one service (several daemons share
    // PostgreSQL; a SQLite store has one daemon, which refuses a second: STORE_IN_USE)
    second = usePostgres
      ? await startDaemon({ port: 0, host: '127.0.0.1', dataDir: d.dataDir, config: d.daemon.ctx.config, logLevel: 'silent' })
      : d.daemon;
    fx = await oauthFixture(d);
  });
  afterAll(async () => {
    if (second !== d?.daemon) await second?.close();
    await d?.close();
  });
  afterEach(() => vi.useRealTimers());

  const jwks = async (base = d.api) => ((await (await fetch(`${base}/oauth/jwks`)).json()) as { keys: JWK[] }).keys;
  const walletAt = (base: string, token: string) => fetch(`${base}/wallet`, { headers: { authorization: `Bearer ${token}` } });
  async function accessToken(): Promise<string> {
    const p = pkce();
    const r = await exchange(d, await getCode(d, fx.cookie, authParams(p.challenge)), p.verifier);
    expect(r.status).toBe(200);
    return String(r.body.access_token);
  }

  test('one key from the first start, shared by both daemons, public parts only', async () => {
    const keys = await jwks();
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String), n: expect.any(String), e: 'AQAB' });
    for (const secret of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(keys[0]).not.toHaveProperty(secret);
    expect(await jwks(`${second.url}/api`)).toEqual(keys);
    const discovery = (await (await fetch(`${d.url}/.well-known/openid-configuration`)).json()) as { issuer: string; jwks_uri: string };
    expect(discovery).toMatchObject({ issuer: ISSUER, jwks_uri: `${ISSUER}/api/oauth/jwks` });

    const token = await accessToken();
    expect(decodeProtectedHeader(token).kid).toBe(keys[0].kid);
    expect((await walletAt(`${second.url}/api`, token)).status).toBe(200);
  });

  test('rotate-keys: old tokens keep working, new ones use the new key, the old key leaves the JWKS after 15 minutes', async () => {
    const [old] = await jwks();
    const before = await accessToken();

    const r = await runCli(['admin', 'oauth', 'rotate-keys', '--json', '--data', d.dataDir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { kid: string; previous: string };
    expect(out.previous).toBe(old.kid);
    expect(out.kid).not.toBe(old.kid);

    const keys = await jwks();
    expect(keys.map((k) => k.kid).sort()).toEqual([old.kid, out.kid].sort());

    // tokens signed before the rotation still verify, at both daemons and against the published JWKS
    expect((await walletAt(d.api, before)).status).toBe(200);
    expect((await walletAt(`${second.url}/api`, before)).status).toBe(200);
    await jwtVerify(before, createLocalJWKSet({ keys }), { issuer: ISSUER, audience: `${ISSUER}/api` });

    // new tokens: the new kid, accepted by the daemon that did not sign them too
    const after = await accessToken();
    expect(decodeProtectedHeader(after).kid).toBe(out.kid);
    expect((await walletAt(`${second.url}/api`, after)).status).toBe(200);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 18 * 60_000);
    expect((await jwks()).map((k) => k.kid)).toEqual([out.kid]);
    expect((await walletAt(d.api, before)).status).toBe(401); // expired anyway
  });

  test('concurrent rotations from two daemons leave exactly one current key', async () => {
    const results = await Promise.all([rotateSigningKey(d.daemon.ctx.db), rotateSigningKey(second.ctx.db), rotateSigningKey(d.daemon.ctx.db)]);
    const current = await d.daemon.ctx.db.all<{ kid: string }>('SELECT kid FROM oauth_keys WHERE retired_at IS NULL');
    expect(current).toHaveLength(1);
    // serialised: each rotation retired the key the one before it made
    const kids = new Set(results.map((r) => r.kid));
    expect(kids.size).toBe(3);
    expect(results.filter((r) => kids.has(r.previous!))).toHaveLength(2);
    expect(kids.has(current[0].kid)).toBe(true);
  });

  test('a restart keeps the current key', async () => {
    const [current] = await jwks();
    if (!usePostgres) await d.daemon.close(); // one daemon per SQLite store: a real restart (the last test here)
    const third = await startDaemon({ port: 0, host: '127.0.0.1', dataDir: d.dataDir, config: d.daemon.ctx.config, logLevel: 'silent' });
    try {
      expect((await jwks(`${third.url}/api`)).map((k) => k.kid)).toContain(current.kid);
      const rows = await third.ctx.db.all('SELECT kid FROM oauth_keys WHERE retired_at IS NULL');
      expect(rows).toHaveLength(1);
    } finally {
      await third.close();
    }
  });
});
