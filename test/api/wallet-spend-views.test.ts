import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { getJson, portalLogin } from '../helpers/portal.js';
import { bundle, json, publishJson } from './skills-helpers.js';

/**
 * Issue 14 point 14: the wallet's transaction list did not say when the monthly allowance
 * paid rather than the balance, and a skill purchase was missing from "Charged".
 */
let td: TestDaemon;
let skill: number;
let big: number;
beforeAll(async () => {
  td = await startTestDaemon();
  const owner = await td.user({ tier: 'free' });
  skill = (await json(await publishJson(td, owner.key, { version: '1.0.0', price: 1.1 }, bundle('priced-skill')))).id;
  big = (await json(await publishJson(td, owner.key, { version: '1.0.0', price: 6 }, bundle('dear-skill')))).id;
});
afterAll(() => td?.close());

const install = (id: number, key: string) => td.fetch(`/skills/${id}/install`, { method: 'POST', key });
const transactions = async (key: string) => (await json(await td.fetch('/wallet/transactions', { key }))).items;

describe('wallet transactions say what the allowance paid (fromAllowance)', () => {
  it('allowance first, then the balance; credits 0', async () => {
    // pro: a $5 monthly allowance
    const u = await td.user({ tier: 'pro', balance: 10 });
    expect((await install(skill, u.key)).status).toBe(200); // $1.10, all from the allowance
    expect((await install(big, u.key)).status).toBe(200); // $6: $3.90 allowance left, $2.10 from the balance
    const [dear, cheap, credit] = await transactions(u.key);
    expect(cheap).toMatchObject({ type: 'skill_purchase', amount: -1.1, fromAllowance: 1.1, balanceAfter: 10 });
    expect(dear).toMatchObject({ type: 'skill_purchase', amount: -6, fromAllowance: 3.9 });
    expect(dear.balanceAfter).toBeCloseTo(7.9, 9);
    expect(credit).toMatchObject({ type: 'credit', amount: 10, fromAllowance: 0 });
    // free tier: no allowance, the balance pays everything
    const v = await td.user({ tier: 'free', balance: 2 });
    expect((await install(skill, v.key)).status).toBe(200);
    expect((await transactions(v.key))[0]).toMatchObject({ amount: -1.1, fromAllowance: 0 });
  });
});

describe('a skill purchase is part of what was charged', () => {
  it('the spend summary reports purchases beside the calls, the daily series per day', async () => {
    const u = await td.user({ tier: 'free', balance: 10 });
    const s = await portalLogin(td, u);
    const before = (await getJson(td, '/portal/spend/summary', s.cookie)).body;
    expect(before.purchases).toEqual({ count: 0, amount: 0 });
    expect((await install(skill, u.key)).status).toBe(200);
    expect((await install(big, u.key)).status).toBe(200);
    const after = (await getJson(td, '/portal/spend/summary?range=7d', s.cookie)).body;
    expect(after.purchases.count).toBe(2);
    expect(after.purchases.amount).toBeCloseTo(7.1, 9);
    expect(after.totals).toEqual({ calls: 0, failures: 0, rawCost: 0, customerCost: 0 }); // calls only, as the spec says
    const daily = (await getJson(td, '/portal/spend/daily?range=7d', s.cookie)).body;
    const today = new Date().toISOString().slice(0, 10);
    expect(daily.days.find((d: { date: string }) => d.date === today).purchaseCost).toBeCloseTo(7.1, 9);
    expect(daily.days.reduce((a: number, d: { purchaseCost: number }) => a + d.purchaseCost, 0)).toBeCloseTo(7.1, 9);
  });
});
