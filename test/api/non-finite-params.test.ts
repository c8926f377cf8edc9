import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin } from '../helpers/portal.js';

/**
 * Issue #14 point 3: `1e309` (Infinity) and other non-finite numbers in a numeric query or
 * path parameter are 400 INVALID_REQUEST naming the parameter, never a 500. The test walks
 * /api/openapi.json, so every operation, today's and tomorrow's, is covered.
 */
const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
const HOSTILE = ['1e309', '-1e309', 'NaN', '1e999'];

interface Param {
  in: string;
  name: string;
  required?: boolean;
  schema: Record<string, unknown>;
}
interface Operation {
  parameters?: Param[];
  security?: Record<string, string[]>[];
}

const isNumeric = (s: Record<string, unknown>): boolean =>
  s.type === 'number' ||
  s.type === 'integer' ||
  (Array.isArray(s.type) && s.type.some((t) => t === 'number' || t === 'integer')) ||
  (['anyOf', 'oneOf'] as const).some((k) => Array.isArray(s[k]) && (s[k] as Record<string, unknown>[]).some(isNumeric));

let td: TestDaemon;
let user: TestUser;
let cookie: string;
const cases: { op: string; method: string; path: string; param: Param; session: boolean }[] = [];

beforeAll(async () => {
  td = await startTestDaemon();
  user = await td.user({ balance: 5 });
  cookie = (await portalLogin(td, user)).cookie;
  const doc = (await (await td.fetch('/openapi.json')).json()) as { paths: Record<string, Record<string, Operation>> };
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const session = !!op.security?.length && op.security.every((s) => 'session' in s);
      for (const param of op.parameters ?? []) {
        if ((param.in === 'query' || param.in === 'path') && isNumeric(param.schema)) {
          cases.push({ op: `${method.toUpperCase()} ${path}`, method, path, param, session });
        }
      }
    }
  }
});
afterAll(async () => {
  await td?.close();
});

/** The operation's URL with `value` in the parameter under test and plausible values elsewhere. */
function urlFor(c: (typeof cases)[number], value: string): string {
  const path = c.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (c.param.in === 'path' && name === c.param.name) return encodeURIComponent(value);
    return name === 'id' ? '1' : 'x';
  });
  const q = c.param.in === 'query' ? `?${encodeURIComponent(c.param.name)}=${encodeURIComponent(value)}` : '';
  return `${td.url}${path}${q}`;
}

describe('non-finite numbers in numeric parameters', () => {
  it('the OpenAPI document has numeric parameters to try (query and path)', () => {
    expect(cases.some((c) => c.param.in === 'query')).toBe(true);
    expect(cases.some((c) => c.param.in === 'path')).toBe(true);
    // the ones issue #14 named
    const named = cases.map((c) => `${c.op} ${c.param.name}`);
    for (const n of ['GET /api/skills limit', 'GET /api/skills page', 'GET /api/wallet/transactions limit', 'GET /api/skills/mine/timeseries days']) {
      expect(named).toContain(n);
    }
  });

  it('every numeric query and path parameter of every operation answers 400 INVALID_REQUEST naming it', async () => {
    const failures: string[] = [];
    for (const c of cases) {
      for (const value of HOSTILE) {
        const headers: Record<string, string> = c.session ? { cookie } : { authorization: `Bearer ${user.key}` };
        const r = await fetch(urlFor(c, value), { method: c.method.toUpperCase(), headers });
        const text = await r.text();
        let body: { code?: string; error?: string; details?: { field?: string } } = {};
        try {
          body = JSON.parse(text);
        } catch {
          /* reported below */
        }
        const ok = r.status === 400 && body.code === 'INVALID_REQUEST' && body.details?.field === c.param.name && !!body.error?.includes(c.param.name);
        if (!ok) failures.push(`${c.op} ${c.param.name}=${value}: ${r.status} ${text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});
