import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';

/**
 * Issue #2 point 8: every error, fastify's own included, answers the spec's Error body
 * with a stable code, no stack trace, and leaves the store as it was.
 */
let d: TestDaemon;
let u: TestUser;

beforeAll(async () => {
  d = await startTestDaemon({ yaml: 'wallet: { selfTopup: true }\n' }); // the top-up serves as a plain state-changing call
  u = await d.user({ balance: 5 });
});
afterAll(() => d.close());

/** What a bad request must not change: the wallet, its transactions, users and keys. */
async function snapshot() {
  const db = d.daemon.ctx.db;
  const w = await db.get<{ b: number }>('SELECT balance_nusd AS b FROM wallets WHERE user_id = ?', [u.id]);
  const count = async (table: string) => Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))!.n);
  return {
    balance: Number(w!.b),
    transactions: await count('wallet_transactions'),
    users: await count('users'),
    keys: await count('api_keys'),
  };
}

async function expectError(res: Response, status: number, code: string): Promise<{ error: string; code: string; details?: Record<string, unknown> }> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  expect(body.code).toBe(code);
  expect(typeof body.error).toBe('string');
  expect(body.error.length).toBeGreaterThan(0);
  expect(Object.keys(body).every((k) => ['error', 'code', 'details'].includes(k))).toBe(true);
  // no stack traces or source paths
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|statusCode/);
  return body;
}

const topup = (body: BodyInit | undefined, contentType?: string, key: string | null = u.key) =>
  d.fetch('/wallet/topup', { method: 'POST', key: key ?? undefined, body, headers: contentType ? { 'content-type': contentType } : {} });

describe('error format: malformed bodies change nothing', () => {
  const cases: [string, () => Promise<Response>, number, string][] = [
    ['malformed JSON', () => topup('{"amount": 5', 'application/json'), 400, 'INVALID_JSON'],
    ['empty JSON body', () => topup('', 'application/json'), 400, 'INVALID_JSON'],
    ['unsupported content type', () => topup('<amount>5</amount>', 'application/xml'), 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['body over the 10 MiB limit', () => topup(`{"amount":1,"pad":"${'a'.repeat(10 * 1024 * 1024)}"}`, 'application/json'), 413, 'PAYLOAD_TOO_LARGE'],
  ];
  for (const [name, send, status, code] of cases) {
    it(`${name} -> ${status} ${code}`, async () => {
      const before = await snapshot();
      await expectError(await send(), status, code);
      expect(await snapshot()).toEqual(before);
    });
  }
});

describe('error format: schema violations are INVALID_REQUEST naming the field', () => {
  const cases: [string, unknown, string][] = [
    ['wrong type', { amount: 'five' }, 'amount'],
    ['missing field', {}, 'amount'],
    ['unknown field', { amount: 5, bonus: 100 }, 'bonus'],
    ['over the maximum', { amount: 10_001 }, 'amount'],
    ['not positive', { amount: 0 }, 'amount'],
  ];
  for (const [name, json, field] of cases) {
    it(`${name}: ${JSON.stringify(json)} -> details.field ${field}`, async () => {
      const before = await snapshot();
      const body = await expectError(await topup(JSON.stringify(json), 'application/json'), 400, 'INVALID_REQUEST');
      expect(body.details).toMatchObject({ field, location: 'body' });
      expect(body.error).toContain(field);
      expect(await snapshot()).toEqual(before);
    });
  }

  it('query string violations name the parameter', async () => {
    const body = await expectError(await d.fetch('/wallet/transactions?limit=lots', { key: u.key }), 400, 'INVALID_REQUEST');
    expect(body.details).toMatchObject({ field: 'limit', location: 'querystring' });
  });

  it('missing credentials win over a bad body: 401, not 400', async () => {
    const before = await snapshot();
    await expectError(await topup('{"amount":"x"}', 'application/json', null), 401, 'UNAUTHORIZED');
    expect(await snapshot()).toEqual(before);
  });

  it('the same request with a valid body does change the store (the snapshot sees changes)', async () => {
    const before = await snapshot();
    const res = await topup(JSON.stringify({ amount: 1.25 }), 'application/json');
    expect(res.status).toBe(200);
    expect(await snapshot()).toEqual({ ...before, balance: before.balance + 1_250_000_000, transactions: before.transactions + 1 });
  });
});

describe('error format: routing and HTTP-level errors', () => {
  it('unknown route -> 404 NOT_FOUND', async () => {
    await expectError(await d.fetch('/no/such/route'), 404, 'NOT_FOUND');
    await expectError(await fetch(`${d.url}/api`), 404, 'NOT_FOUND');
  });

  it('known path, wrong method -> 405 METHOD_NOT_ALLOWED with Allow', async () => {
    const before = await snapshot();
    const res = await d.fetch('/wallet', { method: 'DELETE', key: u.key });
    expect(res.headers.get('allow')).toMatch(/GET/);
    await expectError(res, 405, 'METHOD_NOT_ALLOWED');
    await expectError(await d.fetch('/healthz', { method: 'POST' }), 405, 'METHOD_NOT_ALLOWED');
    expect(await snapshot()).toEqual(before);
  });

  it('a path that is not a valid URL -> 400 INVALID_REQUEST', async () => {
    await expectError(await d.fetch('/wallet/%zz'), 400, 'INVALID_REQUEST');
  });

  it('malformed HTTP and oversized headers get the Error body from the connection handler', async () => {
    const raw = (payload: string) =>
      new Promise<string>((resolve, reject) => {
        const s = connect(Number(new URL(d.url).port), '127.0.0.1');
        let out = '';
        s.on('data', (c) => (out += c));
        s.on('error', reject);
        s.on('close', () => resolve(out));
        s.end(payload);
      });
    const bad = await raw('NOT HTTP AT ALL\r\n\r\n');
    expect(bad).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(bad.slice(bad.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'malformed HTTP request', code: 'INVALID_REQUEST' });
    const big = await raw(`GET /api/healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`);
    expect(big).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)).code).toBe('HEADERS_TOO_LARGE');
  });
});
