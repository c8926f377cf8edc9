import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin } from '../helpers/portal.js';
import { seedRequests, type SeedRequest } from '../helpers/seed-requests.js';
import { openSse } from '../helpers/sse.js';
import { usePostgres } from '../helpers/pg.js';
import { liveOf } from '../../src/daemon/requests/live.js';

/**
 * The request log's API on both stores, over records written as bookings write them:
 * the contract's Request, newest-first cursor pages (no duplicates while calls are being
 * booked), every filter, isolation between accounts and the master token's view,
 * exports, the daily series and the live stream (fed by another daemon on PostgreSQL).
 */
const MASTER = 'master-token-for-requests-0123456789';
const HOUR = 3_600_000;
const DAY = 86_400_000;

let td: TestDaemon;
let ada: TestUser;
let bob: TestUser;
let seeded: (SeedRequest & { id: string })[];
const now = Date.now();

async function get(path: string, auth: string | { cookie: string } = ada.key) {
  const res = await td.fetch(path, typeof auth === 'string' ? { key: auth } : { headers: auth });
  return { status: res.status, body: (await res.json()) as any, headers: res.headers };
}

/** Every page of a listing, following nextCursor. */
async function allPages(query: string, auth: string = ada.key, limit = 7): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 1000; i++) {
    const r = await get(`/requests?limit=${limit}${query}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, auth);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    items.push(...r.body.items);
    cursor = r.body.nextCursor;
    if (!cursor) return items;
  }
  throw new Error('too many pages');
}

const newestFirst = (rows: { createdAt: number; id: string }[]) =>
  [...rows].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((r) => r.id);

beforeAll(async () => {
  td = await startTestDaemon({ yaml: `auth:\n  masterToken: ${MASTER}\n` });
  [ada, bob] = [await td.user(), await td.user()];
  const rows: SeedRequest[] = [];
  for (let i = 0; i < 60; i++) {
    rows.push({
      userId: ada.id,
      // pairs share a millisecond: the id breaks the tie
      createdAt: now - Math.floor(i / 2) * 10 * 60_000,
      keyId: i % 3 === 0 ? ada.keyId : null,
      projectId: i % 4 === 0 ? 'prj_apollo' : null,
      provider: i % 2 ? 'anthropic' : 'openai',
      model: i % 2 ? 'claude-haiku-4-5' : 'gpt-4o-mini',
      endpoint: i % 5 === 0 ? 'smart' : 'chat',
      status: i % 6 === 0 ? 503 : i % 10 === 1 ? 402 : 200,
      code: i % 10 === 1 ? 'INSUFFICIENT_FUNDS' : undefined,
      costNano: 1000 + i,
      latencyMs: 100 + i,
    });
  }
  for (let i = 0; i < 10; i++) rows.push({ userId: bob.id, createdAt: now - i * 60_000, provider: 'groq', model: 'llama-3.1-8b-instant' });
  seeded = await seedRequests(td.daemon.ctx.db, rows);
});
afterAll(() => td?.close());

const adaRows = () => seeded.filter((r) => r.userId === ada.id);

describe('GET /api/requests', () => {
  test('answers the contract’s Request objects, newest first, and pages through every record exactly once', async () => {
    const first = await get('/requests?limit=5');
    expect(first.status).toBe(200);
    expect(first.body.items).toHaveLength(5);
    const r0 = seeded.find((r) => r.id === first.body.items[0].id)!;
    expect(Object.keys(first.body.items[0]).sort()).toEqual(
      ['id', 'createdAt', 'endpoint', 'keyId', 'projectId', 'provider', 'model', 'alias', 'stream', 'status', 'code', 'promptTokens', 'completionTokens', 'cachedTokens', 'cacheWriteTokens', 'reasoningTokens', 'cost', 'latencyMs', 'ttfbMs', 'attempts', 'droppedParams'].sort(),
    );
    expect(first.body.items[0]).toMatchObject({ createdAt: new Date(r0.createdAt).toISOString(), provider: r0.provider, model: r0.model, status: r0.status ?? 200 });
    const all = await allPages('');
    expect(all.map((x) => x.id)).toEqual(newestFirst(adaRows()));
    expect(new Set(all.map((x) => x.id)).size).toBe(60);
  });

  test('a refused call has its status and code, costs nothing and tried no upstream', async () => {
    const refused = (await allPages('&status=error')).filter((x) => x.status === 402);
    expect(refused.length).toBeGreaterThan(0);
    for (const x of refused) expect(x).toMatchObject({ code: 'INSUFFICIENT_FUNDS', cost: 0, attempts: 0 });
  });

  test.each([
    ['&provider=anthropic', (r: SeedRequest) => r.provider === 'anthropic'],
    ['&model=gpt-4o-mini', (r: SeedRequest) => r.model === 'gpt-4o-mini'],
    ['&status=ok', (r: SeedRequest) => (r.status ?? 200) < 400],
    ['&status=error', (r: SeedRequest) => (r.status ?? 200) >= 400],
    ['&project=prj_apollo', (r: SeedRequest) => r.projectId === 'prj_apollo'],
    ['&endpoint=smart', (r: SeedRequest) => r.endpoint === 'smart'],
    ['&since=3h', (r: SeedRequest) => r.createdAt > now - 3 * HOUR],
    ['&provider=openai&status=error&since=5h', (r: SeedRequest) => r.provider === 'openai' && (r.status ?? 200) >= 400 && r.createdAt > now - 5 * HOUR],
  ])('filter %s', async (q, want) => {
    const got = await allPages(q);
    expect(got.map((x) => x.id)).toEqual(newestFirst(adaRows().filter(want)));
  });

  test('filter keyId, and since as an ISO date-time', async () => {
    expect((await allPages(`&keyId=${ada.keyId}`)).map((x) => x.id)).toEqual(newestFirst(adaRows().filter((r) => r.keyId === ada.keyId)));
    const since = new Date(now - 2 * HOUR).toISOString();
    expect((await allPages(`&since=${since}`)).map((x) => x.id)).toEqual(newestFirst(adaRows().filter((r) => r.createdAt >= now - 2 * HOUR)));
  });

  test('paging while calls are booked: no record twice, none of those there before missed', async () => {
    const before = new Set(adaRows().map((r) => r.id));
    const seen: string[] = [];
    let cursor: string | null = null;
    let round = 0;
    do {
      const r = await get(`/requests?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      seen.push(...r.body.items.map((x: any) => x.id));
      cursor = r.body.nextCursor;
      // new calls between pages: newer ones, and one sharing the timestamp of the page's last record
      const last = r.body.items.at(-1);
      await seedRequests(td.daemon.ctx.db, [
        { userId: ada.id, createdAt: Date.now(), model: 'paging-new' },
        { userId: ada.id, createdAt: Date.parse(last.createdAt), model: 'paging-new', id: `use_zz${round++}` },
      ]);
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
  });

  test('limit above 500, a malformed cursor or an unknown status is a 400 with the Error body, never a silent cut', async () => {
    for (const q of ['limit=501', 'limit=0', 'cursor=nope', 'status=bad', 'since=yesterday', 'bogus=1']) {
      const r = await get(`/requests?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.body.code, q).toBeTruthy();
    }
    const full = await get('/requests?limit=500');
    expect(full.status).toBe(200);
    expect(full.body.nextCursor).toBeNull();
  });
});

describe('accounts see their own calls; the master token sees all', () => {
  test('another account lists only its own, and gets 404 for a record of someone else', async () => {
    const bobs = await allPages('', bob.key);
    expect(bobs.map((x) => x.id).sort()).toEqual(seeded.filter((r) => r.userId === bob.id).map((r) => r.id).sort());
    const r = await get(`/requests/${adaRows()[0].id}`, bob.key);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('REQUEST_NOT_FOUND');
    expect((await get(`/requests/${adaRows()[0].id}`)).status).toBe(200);
  });

  test('userId is the master token’s: an account passing it gets 403; the master lists every account, or one', async () => {
    expect((await get(`/requests?userId=${bob.id}`)).status).toBe(403);
    const every = await allPages('', MASTER, 100);
    const ids = new Set(every.map((x) => x.id));
    for (const r of seeded) expect(ids.has(r.id)).toBe(true);
    expect(every.find((x) => x.id === seeded.find((r) => r.userId === bob.id)!.id).userId).toBe(bob.id);
    const justBob = await allPages(`&userId=${bob.id}`, MASTER);
    expect(justBob.every((x) => x.userId === bob.id)).toBe(true);
    expect(justBob).toHaveLength(10);
    expect((await get(`/requests/${adaRows()[0].id}`, MASTER)).body.userId).toBe(ada.id);
  });

  test('the portal session reads the log too; no credentials is a 401', async () => {
    const s = await portalLogin(td, ada);
    const r = await get('/requests?limit=3', { cookie: s.cookie });
    expect(r.status).toBe(200);
    expect(r.body.items.every((x: any) => adaRows().some((a) => a.id === x.id) || x.model === 'paging-new')).toBe(true);
    expect((await td.fetch('/requests')).status).toBe(401);
  });
});

describe('export', () => {
  test('NDJSON holds every matching record, newest first, as the list gives them', async () => {
    const res = await td.fetch('/requests/export?format=ndjson&provider=anthropic', { key: ada.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    expect(res.headers.get('content-disposition')).toMatch(/attachment; filename="agw-requests-.*\.ndjson"/);
    const lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toEqual(await allPages('&provider=anthropic'));
  });

  test('CSV: a header, one row per record, and no spreadsheet formula from a model name', async () => {
    await seedRequests(td.daemon.ctx.db, [{ userId: bob.id, createdAt: now - 30 * 60_000, model: '=HYPERLINK("x","y"), "quoted"' }]);
    const res = await td.fetch('/requests/export?format=csv', { key: bob.key });
    expect(res.headers.get('content-type')).toContain('text/csv');
    const text = await res.text();
    const rows = text.trim().split('\r\n');
    expect(rows[0]).toBe('id,createdAt,endpoint,keyId,projectId,provider,model,alias,stream,status,code,promptTokens,completionTokens,cachedTokens,cacheWriteTokens,reasoningTokens,cost,latencyMs,ttfbMs,attempts,droppedParams');
    expect(rows).toHaveLength(1 + 11);
    expect(text).toContain(`"'=HYPERLINK(""x"",""y""), ""quoted"""`);
  });
});

describe('GET /api/requests/daily', () => {
  test('per UTC day: calls, errors and nearest-rank latency p50/p95 of the calls that reached an upstream', async () => {
    const r = await get('/requests/daily?days=2&userId=' + bob.id, MASTER);
    expect(r.status).toBe(200);
    expect(r.body.days).toHaveLength(2);
    const mine = await get('/requests/daily?days=3');
    const rows = adaRows().filter((x) => x.model !== 'paging-new');
    const today = Math.floor(now / DAY);
    for (const d of mine.body.days) {
      const day = Math.floor(Date.parse(d.date) / DAY);
      const inDay = (await allPages('')).filter((x) => Math.floor(Date.parse(x.createdAt) / DAY) === day);
      expect(d.requests).toBe(inDay.length);
      expect(d.errors).toBe(inDay.filter((x) => x.status >= 400).length);
      const lat = inDay.filter((x) => x.attempts > 0 && x.latencyMs !== null).map((x) => x.latencyMs).sort((a, b) => a - b);
      expect(d.latencyP50Ms).toBe(lat.length ? lat[Math.ceil(lat.length * 0.5) - 1] : null);
      expect(d.latencyP95Ms).toBe(lat.length ? lat[Math.ceil(lat.length * 0.95) - 1] : null);
    }
    expect(mine.body.days.at(-1).date).toBe(new Date(today * DAY).toISOString().slice(0, 10));
    expect(rows.length).toBeGreaterThan(0);
  });
});

describe('GET /api/requests/stream', () => {
  test(`streams the calls booked from now on, the caller’s only and filtered${usePostgres ? ', booked by another daemon on the same PostgreSQL' : ''}`, async () => {
    const other = usePostgres ? await startTestDaemon({ store: td.daemon.ctx.config.store }) : td;
    try {
      const sse = await openSse(`${td.api}/requests/stream?provider=openai`, { authorization: `Bearer ${ada.key}` });
      expect(sse.status).toBe(200);
      expect(sse.headers.get('content-type')).toContain('text/event-stream');
      await new Promise((r) => setTimeout(r, 300));
      const t = Date.now();
      const fresh = await seedRequests(other.daemon.ctx.db, [
        { userId: ada.id, createdAt: t, provider: 'openai', model: 'live-1' },
        { userId: ada.id, createdAt: t, provider: 'anthropic', model: 'live-filtered-out' },
        { userId: bob.id, createdAt: t, provider: 'openai', model: 'live-bobs' },
        { userId: ada.id, createdAt: t + 1, provider: 'openai', model: 'live-2' },
      ]);
      const events = await sse.waitFor(2);
      await new Promise((r) => setTimeout(r, 1500)); // one more poll: nothing else arrives
      expect(sse.events.filter((e) => e.event === 'request').map((e) => JSON.parse(e.data).model)).toEqual(['live-1', 'live-2']);
      expect(JSON.parse(events[0].data)).toMatchObject({ id: fresh[0].id, provider: 'openai', status: 200 });
      expect(events[0].id).toBe(`${t}.${fresh[0].id}`);
      sse.close();
      for (let i = 0; i < 50 && liveOf(td.daemon.ctx).size; i++) await new Promise((r) => setTimeout(r, 20));
      expect(liveOf(td.daemon.ctx).size).toBe(0);
    } finally {
      if (other !== td) await other.close();
    }
  });

  test('a daemon shutting down ends its open streams at once instead of waiting for them', async () => {
    const d2 = await startTestDaemon();
    const u = await d2.user();
    const sse = await openSse(`${d2.api}/requests/stream`, { authorization: `Bearer ${u.key}` });
    expect(sse.status).toBe(200);
    const t0 = Date.now();
    await d2.close();
    expect(Date.now() - t0).toBeLessThan(3000);
    for (let i = 0; i < 50 && !sse.ended(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(sse.ended()).toBe(true);
  });

  test('the master token’s stream carries every account’s calls with their userId; a key cannot pass userId', async () => {
    const bad = await td.fetch(`/requests/stream?userId=${bob.id}`, { key: ada.key });
    expect(bad.status).toBe(403);
    const sse = await openSse(`${td.api}/requests/stream`, { authorization: `Bearer ${MASTER}` });
    await new Promise((r) => setTimeout(r, 300));
    await seedRequests(td.daemon.ctx.db, [{ userId: bob.id, createdAt: Date.now(), model: 'live-master' }]);
    const [e] = await sse.waitFor(1);
    expect(JSON.parse(e.data)).toMatchObject({ model: 'live-master', userId: bob.id });
    sse.close();
  });
});
