import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';

function login(td: TestDaemon, email: string, password: string) {
  return td.fetch('/portal/login', { method: 'POST', json: { email, password } });
}

/** Every attempt looks back 16 minutes in time: the throttle window (15 min) has passed. */
async function ageAttempts(td: TestDaemon): Promise<void> {
  await td.daemon.ctx.db.run('UPDATE login_attempts SET created_at = created_at - ?', [16 * 60_000]);
}

describe('login throttling per account', () => {
  let td: TestDaemon;
  let bob: TestUser;
  let carol: TestUser;

  beforeAll(async () => {
    td = await startTestDaemon();
    bob = await td.user();
    carol = await td.user();
  });
  afterAll(() => td.close());

  test('5 failures lock the account for 15 minutes, even for the right password; others are unaffected', async () => {
    for (let i = 0; i < 5; i++) expect((await login(td, bob.email, 'wrong')).status).toBe(401);
    const locked = await login(td, bob.email, bob.password);
    expect(locked.status).toBe(429);
    const body = await locked.json();
    expect(body.code).toBe('TOO_MANY_ATTEMPTS');
    const retry = Number(locked.headers.get('retry-after'));
    expect(retry).toBeGreaterThan(800);
    expect(retry).toBeLessThanOrEqual(900);
    // the email's case does not open a second counter
    expect((await login(td, bob.email.toUpperCase(), bob.password)).status).toBe(429);
    expect((await login(td, carol.email, carol.password)).status).toBe(200);
    await ageAttempts(td);
    expect((await login(td, bob.email, bob.password)).status).toBe(200);
  });

  test('a successful login resets the account counter', async () => {
    await ageAttempts(td);
    for (let i = 0; i < 4; i++) expect((await login(td, carol.email, 'wrong')).status).toBe(401);
    expect((await login(td, carol.email, carol.password)).status).toBe(200);
    for (let i = 0; i < 4; i++) expect((await login(td, carol.email, 'wrong')).status).toBe(401);
    expect((await login(td, carol.email, carol.password)).status).toBe(200);
  });

  test('concurrent guesses cannot slip past the limit', async () => {
    await ageAttempts(td);
    const dave = await td.user();
    const answers = await Promise.all(Array.from({ length: 10 }, () => login(td, dave.email, 'wrong')));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(5);
  });

  test('unknown emails are throttled like real ones (no account enumeration)', async () => {
    await ageAttempts(td);
    for (let i = 0; i < 5; i++) expect((await login(td, 'ghost@example.com', 'x')).status).toBe(401);
    expect((await login(td, 'ghost@example.com', 'x')).status).toBe(429);
  });

  test('scope keys are stored hashed, never the typed email', async () => {
    const rows = await td.daemon.ctx.db.all<{ scope_key: string }>('SELECT scope_key FROM login_attempts');
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(r.scope_key).toMatch(/^(lock:)?(account|address):[0-9a-f]{64}$/);
  });
});

describe('login throttling per address', () => {
  let td: TestDaemon;
  beforeAll(async () => {
    td = await startTestDaemon();
  });
  afterAll(() => td.close());

  test('20 failures from one address lock it out for every account', async () => {
    const erin = await td.user();
    for (let i = 0; i < 20; i++) {
      const r = await login(td, `spray${i}@example.com`, 'guess');
      expect(r.status).toBe(401);
    }
    const r = await login(td, erin.email, erin.password);
    expect(r.status).toBe(429);
    expect((await r.json()).code).toBe('TOO_MANY_ATTEMPTS');
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    await ageAttempts(td);
    expect((await login(td, erin.email, erin.password)).status).toBe(200);
  });
});
