import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { portalLogin } from '../helpers/portal.js';

/**
 * Issue #14 point 6: no self-minted money. POST /api/wallet/topup credits only when the
 * config says `wallet: { selfTopup: true }`; otherwise 403 TOPUP_DISABLED saying how to get
 * credit, and nothing is credited. The portal shows the top-up form or that advice.
 */
let off: TestDaemon;
let on: TestDaemon;
beforeAll(async () => {
  [off, on] = await Promise.all([startTestDaemon(), startTestDaemon({ yaml: 'wallet:\n  selfTopup: true\n' })]);
});
afterAll(async () => {
  await Promise.all([off?.close(), on?.close()]);
});

const balance = async (d: TestDaemon, u: TestUser) => ((await (await d.fetch('/wallet', { key: u.key })).json()) as { balance: number }).balance;
const transactions = async (d: TestDaemon, u: TestUser) =>
  ((await (await d.fetch('/wallet/transactions', { key: u.key })).json()) as { items: unknown[] }).items.length;

describe('self top-up is off by default', () => {
  it('a key holder cannot mint money: 403 TOPUP_DISABLED naming the operator command, nothing credited', async () => {
    const u = await off.user({ balance: 1 });
    const before = await transactions(off, u);
    const r = await off.fetch('/wallet/topup', { method: 'POST', key: u.key, json: { amount: 5 } });
    expect(r.status).toBe(403);
    const body = await r.json();
    expect(body.code).toBe('TOPUP_DISABLED');
    expect(body.error).toContain('agw admin wallet credit');
    expect(await balance(off, u)).toBe(1);
    expect(await transactions(off, u)).toBe(before);
  });

  it('a portal session cannot either', async () => {
    const u = await off.user({ balance: 1 });
    const s = await portalLogin(off, u);
    const r = await off.fetch('/wallet/topup', { method: 'POST', headers: { cookie: s.cookie, 'x-csrf-token': s.csrf }, json: { amount: 5 } });
    expect(r.status).toBe(403);
    expect((await r.json()).code).toBe('TOPUP_DISABLED');
    expect(await balance(off, u)).toBe(1);
  });

  it('the portal says how to get credit instead of offering a top-up form', async () => {
    const u = await off.user({ email: 'topup-off@example.com' });
    const s = await portalLogin(off, u);
    const html = await (await fetch(`${off.url}/`, { headers: { cookie: s.cookie } })).text();
    expect(html).not.toContain('id="topup-form"');
    expect(html).toContain('Self top-up is off on this service');
    expect(html).toContain('agw admin wallet credit topup-off@example.com AMOUNT');
  });

  it('the OpenAPI document lists the 403', async () => {
    const doc = await (await off.fetch('/openapi.json')).json();
    expect(doc.paths['/api/wallet/topup'].post.responses['403']).toBeDefined();
  });
});

describe('wallet.selfTopup: true', () => {
  it('credits the caller and records a topup transaction', async () => {
    const u = await on.user({ balance: 1 });
    const r = await on.fetch('/wallet/topup', { method: 'POST', key: u.key, json: { amount: 2.5 } });
    expect(r.status).toBe(200);
    expect((await r.json()).balance).toBe(3.5);
    const txs = (await (await on.fetch('/wallet/transactions?limit=1', { key: u.key })).json()) as { items: { type: string; amount: number }[] };
    expect(txs.items[0]).toMatchObject({ type: 'topup', amount: 2.5 });
  });

  it('the portal offers the top-up form', async () => {
    const u = await on.user();
    const s = await portalLogin(on, u);
    const html = await (await fetch(`${on.url}/`, { headers: { cookie: s.cookie } })).text();
    expect(html).toContain('id="topup-form"');
    expect(html).not.toContain('Self top-up is off');
  });
});
