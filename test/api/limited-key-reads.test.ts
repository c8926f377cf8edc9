import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { waitFor } from '../helpers/wait.js';

/**
 * A key with limits is not the account (review M3): as on /api/spend, it does not read the
 * account's money, and it reads only its own calls and those of the keys made with it. The
 * request log (list, one record, daily series, export, live stream) is narrowed to them;
 * the wallet's transactions are refused (403 FORBIDDEN), as the account's spend is.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const chat = (key: string, text: string) => f.d.fetch('/gateway/chat', { method: 'POST', key, json: { model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: text }] } });
const get = async (path: string, key: string) => {
  const res = await f.d.fetch(path, { key });
  return { status: res.status, body: res.headers.get('content-type')?.startsWith('application/json') ? await res.json() : await res.text() };
};

describe('a limited key reads only its own calls and none of the account’s money', () => {
  test('list, record, daily, export: its calls and its children’s; transactions 403; the account’s key sees all', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const made = await f.d.fetch('/keys', { method: 'POST', key: u.key, json: { name: 'ci', limits: { budget: 1 } } });
    const ci = (await made.json()) as { id: string; key: string };
    const childRes = await f.d.fetch('/keys', { method: 'POST', key: ci.key, json: { name: 'ci-child' } });
    const child = (await childRes.json()) as { id: string; key: string };
    const sibling = (await (await f.d.fetch('/keys', { method: 'POST', key: u.key, json: { name: 'other', limits: { rpm: 100 } } })).json()) as { id: string; key: string };

    const own = await chat(ci.key, 'from ci');
    const fromChild = await chat(child.key, 'from the child');
    const fromAccount = await chat(u.key, 'from the account');
    const fromSibling = await chat(sibling.key, 'from the sibling');
    for (const r of [own, fromChild, fromAccount, fromSibling]) expect(r.status).toBe(200);

    const list = await get('/requests', ci.key);
    expect(list.status).toBe(200);
    expect(new Set(list.body.items.map((r: { keyId: string }) => r.keyId))).toEqual(new Set([ci.id, child.id]));
    // asking for another key's calls finds none
    expect((await get(`/requests?keyId=${u.keyId}`, ci.key)).body.items).toEqual([]);
    // another key's record is not found
    expect((await get(`/requests/${fromAccount.headers.get('x-request-id')}`, ci.key)).status).toBe(404);
    expect((await get(`/requests/${fromSibling.headers.get('x-request-id')}`, ci.key)).status).toBe(404);
    expect((await get(`/requests/${own.headers.get('x-request-id')}`, ci.key)).status).toBe(200);
    // the daily series counts its calls only
    const daily = await get('/requests/daily?days=1', ci.key);
    expect(daily.body.days.at(-1).requests).toBe(2);
    // the export too
    const exported = await get('/requests/export?format=ndjson', ci.key);
    const lines = String(exported.body).trim().split('\n').map((l) => JSON.parse(l) as { keyId: string });
    expect(new Set(lines.map((l) => l.keyId))).toEqual(new Set([ci.id, child.id]));
    // the child sees only itself
    expect(new Set((await get('/requests', child.key)).body.items.map((r: { keyId: string }) => r.keyId))).toEqual(new Set([child.id]));

    // the account's money: refused, as /api/spend is
    const tx = await get('/wallet/transactions', ci.key);
    expect(tx.status).toBe(403);
    expect(tx.body.code).toBe('FORBIDDEN');
    expect((await get('/wallet/transactions', child.key)).status).toBe(403);

    // the account's own key sees every call and the transactions
    expect((await get('/requests', u.key)).body.items).toHaveLength(4);
    expect((await get('/requests/daily?days=1', u.key)).body.days.at(-1).requests).toBe(4);
    expect((await get('/wallet/transactions', u.key)).status).toBe(200);
  });

  test('the live stream shows a limited key its own calls only', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const ci = (await (await f.d.fetch('/keys', { method: 'POST', key: u.key, json: { name: 'ci', limits: { budget: 1 } } })).json()) as { id: string; key: string };
    const ac = new AbortController();
    const res = await fetch(`${f.d.api}/requests/stream`, { headers: { authorization: `Bearer ${ci.key}` }, signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    const read = (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        text += new TextDecoder().decode(value);
      }
    })();
    // waits for what the stream says rather than for a fixed time (a loaded machine is slow)
    await waitFor(() => text.includes(': connected'), 10_000);
    expect((await chat(u.key, 'from the account')).status).toBe(200);
    expect((await chat(ci.key, 'from ci')).status).toBe(200);
    await waitFor(() => text.includes(ci.id), 10_000);
    // the account's call settled first: had it leaked, it would be there by now; a moment more for a straggler
    await new Promise((r) => setTimeout(r, 300));
    ac.abort();
    await read;
    const events = text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { keyId: string });
    expect(events.map((e) => e.keyId)).toEqual([ci.id]);
  });
});
