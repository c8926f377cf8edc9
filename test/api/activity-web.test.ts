import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin, type PortalSession } from '../helpers/portal.js';
import { seedRequests, type SeedRequest } from '../helpers/seed-requests.js';
import { activityQuery } from '../../src/daemon/routes/activity-web.js';

/**
 * `/activity` and `/activity/{id}` as HTML on both stores: the signed-in account's calls
 * as GET /api/requests gives them, filters as a GET form, cursor paging as links, the
 * detail page, everything escaped, the strict CSP, and the shared navigation.
 */
let td: TestDaemon;
let ada: TestUser;
let bob: TestUser;
let s: PortalSession;
let seeded: (SeedRequest & { id: string })[];
const now = Date.now();
const HOSTILE = '<img src=x onerror=alert(1)>"model';

const page = (path: string, cookie = s.cookie) => fetch(`${td.url}${path}`, { headers: { cookie }, redirect: 'manual' });
const ids = (html: string) => [...html.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1]);
const api = async (path: string) => (await (await td.fetch(path, { key: ada.key })).json()) as any;

beforeAll(async () => {
  td = await startTestDaemon();
  [ada, bob] = [await td.user(), await td.user()];
  const rows: SeedRequest[] = [];
  for (let i = 0; i < 75; i++) {
    rows.push({ userId: ada.id, createdAt: now - i * 5 * 60_000, model: i === 3 ? HOSTILE : i % 2 ? 'claude-haiku-4-5' : 'gpt-4o-mini', provider: i % 2 ? 'anthropic' : 'openai', status: i % 9 === 0 ? 503 : 200 });
  }
  rows.push({ userId: bob.id, createdAt: now, model: 'bobs-model' });
  seeded = await seedRequests(td.daemon.ctx.db, rows);
  s = await portalLogin(td, ada);
});
afterAll(() => td?.close());

describe('/activity', () => {
  test('signed out: to the login page and back', async () => {
    const r = await fetch(`${td.url}/activity?status=error`, { redirect: 'manual' });
    expect(r.status).toBe(303);
    expect(r.headers.get('location')).toBe(`/login?next=${encodeURIComponent('/activity?status=error')}`);
  });

  test('lists the account’s calls as the API does, 50 to a page; “Older” follows the cursor to the rest, none twice', async () => {
    const r = await page('/activity');
    expect(r.status).toBe(200);
    const csp = r.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const html = await r.text();
    expect(html).toContain('aria-current="page">Activity</a>');
    expect(html).not.toContain('bobs-model');
    const first = await api('/requests?limit=50');
    expect(ids(html)).toEqual(first.items.map((x: any) => x.id));
    const older = /<a rel="next" href="([^"]+)">Older<\/a>/.exec(html)![1].replace(/&amp;/g, '&');
    expect(older).toBe(`/activity?cursor=${encodeURIComponent(first.nextCursor)}`);
    const html2 = await (await page(older)).text();
    const second = await api(`/requests?limit=50&cursor=${encodeURIComponent(first.nextCursor)}`);
    expect(ids(html2)).toEqual(second.items.map((x: any) => x.id));
    expect(new Set([...ids(html), ...ids(html2)]).size).toBe(75);
    expect(html2).not.toContain('rel="next"');
    expect(html2).toContain('>Newest</a>');
  });

  test('filters come from the GET form; empty fields filter nothing; a bad value is no filter rather than an error', async () => {
    const html = await (await page('/activity?model=&provider=anthropic&status=error&since=&keyId=&project=&days=30')).text();
    const want = await api('/requests?provider=anthropic&status=error&limit=50');
    expect(ids(html)).toEqual(want.items.map((x: any) => x.id));
    expect(html).toContain('<option value="error" selected>');
    expect(activityQuery({ status: 'bogus', days: '9999', cursor: 'x', since: '17y', model: ['a', 'b'] })).toMatchObject({ status: '', days: 7, cursor: '', since: '', model: 'a' });
    const none = await (await page('/activity?model=no-such-model')).text();
    expect(none).toContain('No call matches these filters.');
  });

  test('a hostile model name is shown as text', async () => {
    const html = await (await page('/activity?since=24h')).text();
    expect(html).not.toContain('<img src=x');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;model');
  });

  test('charts per day: calls, errors and latency as the daily API gives them', async () => {
    const html = await (await page('/activity')).text();
    const daily = await api('/requests/daily?days=7');
    const bars = [...html.matchAll(/<svg id="calls-chart"[\s\S]*?<\/svg>/g)][0][0];
    expect([...bars.matchAll(/data-value="(\d+)"/g)].map((m) => Number(m[1]))).toEqual(daily.days.map((d: any) => d.requests));
    const errors = [...html.matchAll(/<svg id="errors-chart"[\s\S]*?<\/svg>/g)][0][0];
    expect([...errors.matchAll(/data-value="(\d+)"/g)].map((m) => Number(m[1]))).toEqual(daily.days.map((d: any) => d.errors));
    expect(html).toContain('id="latency-chart"');
    expect(html).toMatch(/<dd id="total-calls"><data value="75">/);
  });
});

describe('/activity/{id}', () => {
  test('every field of the call; someone else’s call or an unknown id is the HTML 404', async () => {
    const id = seeded.find((r) => r.model === HOSTILE)!.id;
    const r = await page(`/activity/${id}`);
    expect(r.status).toBe(200);
    const html = await r.text();
    const rec = await api(`/requests/${id}`);
    expect(html).toContain(`<h1>Call <code class="wrap">${id}</code></h1>`);
    expect(html).toContain(`<dd id="d-cost"><data value="${rec.cost}">`);
    expect(html).toContain('&lt;img src=x');
    expect(html).toContain('id="no-bodies"');
    const bobs = seeded.find((x) => x.userId === bob.id)!.id;
    for (const path of [`/activity/${bobs}`, '/activity/nope', `/activity/${'x'.repeat(300)}`]) {
      const nf = await page(path);
      expect([404, 400], path).toContain(nf.status);
      expect(nf.headers.get('content-type'), path).toMatch(/^text\/html/);
    }
    expect((await page(`/activity/${bobs}`)).status).toBe(404);
  });
});
