import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startAnthropicSim, type SimUpstream } from '../../src/daemon/demo/upstreams.js';
import { startTestDaemon, type TestDaemon } from '../helpers/daemon.js';
import { usageTransactions, walletRow } from '../helpers/gateway-fixture.js';
import { COMPLETION_TOKENS, PROMPT_TOKENS, startKeyUpstream, type KeyUpstream } from '../helpers/key-upstream.js';
import { findModelPrice } from '../../src/shared/providers/index.js';
import { tokenCostNano } from '../../src/shared/money.js';

/**
 * CONTRACT "Several keys per provider" and "Calls stay where their prompt cache is", on a
 * loopback provider account that tells its keys apart: calls spread by weight, a key
 * answered 429 / 5xx / nothing cools down and the same call is served by another key
 * (attempts counted, one charge), both keys refusing gives the spec's status and costs
 * nothing, keys at their rpm give 429, a conversation stays on its key, and the key
 * figures are on /api/metrics without a secret.
 */
const KA = 'sk-test-key-alpha-000000000000';
const KB = 'sk-test-key-bravo-111111111111';
const ANTHROPIC_KEY = 'sk-ant-test-keys-22222222';

let up: KeyUpstream;
let anthropic: SimUpstream;
beforeAll(async () => {
  up = await startKeyUpstream([KA, KB]);
  anthropic = await startAnthropicSim({ apiKey: ANTHROPIC_KEY });
});
afterAll(async () => {
  await up?.close();
  await anthropic?.close();
});

let d: TestDaemon | undefined;
afterEach(async () => {
  await d?.close();
  d = undefined;
  up.requests.length = 0;
  up.set(KA, 'ok');
  up.set(KB, 'ok');
});

const providers = (a: string, b: string, extra = '') => `
providers:
  openai:
    baseUrl: ${up.url}
    keys:
      - { apiKey: ${KA}, name: a${a} }
      - { apiKey: ${KB}, name: b${b} }
${extra}`;

const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });
const proxy = (key: string, json: unknown) => d!.fetch('/external/openai/v1/chat/completions', { method: 'POST', key, json });

async function record(id: string, key: string) {
  const r = await d!.fetch(`/requests/${id}`, { key });
  expect(r.status).toBe(200);
  return (await r.json()) as { attempts: number; status: number; cost: number; code: string | null };
}

const oneCallNano = () => {
  const p = findModelPrice('openai', 'gpt-4o-mini')!;
  return Math.round((tokenCostNano(PROMPT_TOKENS, p.inputPer1M) + tokenCostNano(COMPLETION_TOKENS, p.outputPer1M)) * 2);
};

describe('calls spread over a provider’s keys', () => {
  test('weights 3:1 give 3:1 (smooth weighted round-robin), each key sent with its own secret', async () => {
    d = await startTestDaemon({ yaml: providers(', weight: 3', '') });
    const u = await d.user({ tier: 'free', balance: 5 });
    for (let i = 0; i < 40; i++) expect((await proxy(u.key, chat(`question ${i}`))).status).toBe(200);
    const c = up.counts();
    expect(c[KA]).toBe(30);
    expect(c[KB]).toBe(10);
    // every request carried exactly one of the two keys, never the caller's agw_ key
    for (const r of up.requests) expect([KA, KB]).toContain(r.key);
  });

  test('a key at its rpm is skipped while another has room; all at their limit: 429 UPSTREAM_RATE_LIMITED, nothing charged', async () => {
    d = await startTestDaemon({ yaml: providers(', rpm: 2', ', rpm: 1') });
    const u = await d.user({ tier: 'free', balance: 5 });
    for (let i = 0; i < 3; i++) expect((await proxy(u.key, chat(`q${i}`))).status).toBe(200);
    expect(up.counts()).toEqual({ [KA]: 2, [KB]: 1 });
    const before = await walletRow(d.daemon.ctx.db, u.id);
    const refused = await proxy(u.key, chat('one more'));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await refused.json()).code).toBe('UPSTREAM_RATE_LIMITED');
    expect(up.requests).toHaveLength(3); // the upstream was not contacted
    expect(await walletRow(d.daemon.ctx.db, u.id)).toEqual(before);
    expect(await record(refused.headers.get('x-request-id')!, u.key)).toMatchObject({ status: 429, cost: 0, attempts: 0 });
  });
});

describe('a key that fails cools down and the same call is served by another', () => {
  test('429 on key A: served by key B in the same call, attempts 2, one charge, A cooling (Retry-After honoured)', async () => {
    d = await startTestDaemon({ yaml: providers('', '') });
    const u = await d.user({ tier: 'free', balance: 5 });
    up.set(KA, '429', '30');
    const res = await proxy(u.key, chat('hello'));
    expect(res.status).toBe(200);
    expect((await res.json()).choices[0].message.content).toBe(`served by ${KB.slice(-1)}`);
    expect(up.requests.map((r) => r.key)).toEqual([KA, KB]);
    // the same call: same body both times
    expect(up.requests[0].body).toBe(up.requests[1].body);
    expect(await record(res.headers.get('x-request-id')!, u.key)).toMatchObject({ status: 200, attempts: 2 });
    const txs = await usageTransactions(d.daemon.ctx.db, u.id);
    expect(txs.map((t) => t.amount)).toEqual([-oneCallNano()]);
    // A sits out: the next calls go to B at once
    up.set(KA, 'ok');
    const next = await proxy(u.key, chat('again'));
    expect(await record(next.headers.get('x-request-id')!, u.key)).toMatchObject({ attempts: 1 });
    expect(up.requests.at(-1)!.key).toBe(KB);
    const metrics = await (await d.fetch('/metrics')).text();
    expect(metrics).toContain('agw_upstream_key_healthy{provider="openai",key="a"} 0');
    expect(metrics).toContain('agw_upstream_key_healthy{provider="openai",key="b"} 1');
    expect(metrics).toContain('agw_upstream_key_failures_total{provider="openai",key="a"} 1');
    expect(metrics).toContain('agw_upstream_key_calls_total{provider="openai",key="b"} 2');
    const cooling = Number(/agw_upstream_key_cooling_seconds\{provider="openai",key="a"\} ([\d.]+)/.exec(metrics)![1]);
    expect(cooling).toBeGreaterThan(25); // Retry-After: 30
    expect(cooling).toBeLessThanOrEqual(30);
    expect(metrics).not.toContain(KA);
    expect(metrics).not.toContain(KB);
  });

  test('a 5xx or a connection closed without an answer: the call is tried once more on the other key', async () => {
    d = await startTestDaemon({ yaml: providers('', '') });
    const u = await d.user({ tier: 'free', balance: 5 });
    up.set(KA, '500');
    const r1 = await proxy(u.key, chat('five hundred'));
    expect(r1.status).toBe(200);
    expect(await record(r1.headers.get('x-request-id')!, u.key)).toMatchObject({ attempts: 2 });
    await d.close();
    d = await startTestDaemon({ yaml: providers('', '') });
    const v = await d.user({ tier: 'free', balance: 5 });
    up.requests.length = 0;
    up.set(KA, 'close');
    const r2 = await d.fetch('/gateway/chat', { method: 'POST', key: v.key, json: chat('no answer', { stream: true }) });
    expect(r2.status).toBe(200);
    expect(await r2.text()).toContain('hello');
    expect(up.requests.map((r) => r.key)).toEqual([KA, KB]);
    expect(await record(r2.headers.get('x-request-id')!, v.key)).toMatchObject({ status: 200, attempts: 2 });
  });

  test('both keys 429: the proxy passes 429 on, unified chat answers 429 UPSTREAM_RATE_LIMITED; nothing charged', async () => {
    d = await startTestDaemon({ yaml: providers('', '') });
    const u = await d.user({ tier: 'free', balance: 5 });
    up.set(KA, '429', '1');
    up.set(KB, '429', '1');
    const before = await walletRow(d.daemon.ctx.db, u.id);
    const p = await proxy(u.key, chat('busy'));
    expect(p.status).toBe(429);
    expect(p.headers.get('retry-after')).toBe('1');
    expect(await record(p.headers.get('x-request-id')!, u.key)).toMatchObject({ status: 429, cost: 0, attempts: 2 });
    expect(up.requests.map((r) => r.key)).toEqual([KA, KB]);
    await new Promise((r) => setTimeout(r, 1100)); // both cooled for Retry-After: 1
    const c = await d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: chat('busy too') });
    expect(c.status).toBe(429);
    expect((await c.json()).code).toBe('UPSTREAM_RATE_LIMITED');
    expect(await record(c.headers.get('x-request-id')!, u.key)).toMatchObject({ attempts: 2, cost: 0 });
    expect(await usageTransactions(d.daemon.ctx.db, u.id)).toEqual([]);
    expect(await walletRow(d.daemon.ctx.db, u.id)).toEqual(before);
  });

  test('smart route: both keys 429 fails over to the next provider; with none left, 503 and nothing charged', async () => {
    const yaml = providers('', '', `  anthropic: { baseUrl: ${anthropic.url}, apiKey: ${ANTHROPIC_KEY} }
smartRoutes:
  best-cheap-llm: [ { provider: openai, model: gpt-4o-mini }, { provider: anthropic, model: claude-3-5-haiku-latest } ]
  best-fast-llm: [ { provider: openai, model: gpt-4o-mini } ]
`);
    d = await startTestDaemon({ yaml });
    const u = await d.user({ tier: 'free', balance: 5 });
    up.set(KA, '429', '1');
    up.set(KB, '429', '1');
    const smart = (model: string, content: string) => d!.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json: { model, messages: [{ role: 'user', content }] } });
    const over = await smart('best-cheap-llm', 'fail over');
    expect(over.status).toBe(200);
    expect(over.headers.get('x-smart-route-provider')).toBe('anthropic');
    expect(await record(over.headers.get('x-request-id')!, u.key)).toMatchObject({ attempts: 3 });
    await new Promise((r) => setTimeout(r, 1100));
    const before = await walletRow(d.daemon.ctx.db, u.id);
    const none = await smart('best-fast-llm', 'nowhere');
    expect(none.status).toBe(503);
    expect((await none.json()).code).toBe('ALL_CANDIDATES_FAILED');
    expect(await record(none.headers.get('x-request-id')!, u.key)).toMatchObject({ attempts: 2, cost: 0 });
    expect(await walletRow(d.daemon.ctx.db, u.id)).toEqual(before);
  });
});

describe('a conversation stays where its prompt cache is', () => {
  test('10 calls with the same `user` land on one key; another conversation may go elsewhere', async () => {
    d = await startTestDaemon({ yaml: providers('', '') });
    const u = await d.user({ tier: 'free', balance: 5 });
    for (let i = 0; i < 10; i++) {
      expect((await proxy(u.key, chat(`turn ${i}`, { user: 'ada' }))).status).toBe(200);
      expect((await d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: chat(`turn ${i}`, { user: 'ada' }) })).status).toBe(200);
    }
    expect(new Set(up.requests.map((r) => r.key)).size).toBe(1);
    // without a conversation marker, calls alternate between the keys
    up.requests.length = 0;
    for (let i = 0; i < 4; i++) await proxy(u.key, chat(`fresh ${i}`));
    expect(new Set(up.requests.map((r) => r.key)).size).toBe(2);
  });

  test('the same leading messages (system + first user turn) are one conversation, also across providers on the smart route', async () => {
    const yaml = providers('', '', `  anthropic: { baseUrl: ${anthropic.url}, apiKey: ${ANTHROPIC_KEY} }
smartRoutes:
  best-cheap-llm: [ { provider: openai, model: gpt-4o-mini }, { provider: anthropic, model: claude-3-5-haiku-latest } ]
`);
    d = await startTestDaemon({ yaml });
    const u = await d.user({ tier: 'free', balance: 5 });
    const convo = [{ role: 'system', content: 'You are terse.' }, { role: 'user', content: 'Plan a trip.' }];
    const smart = (messages: unknown[]) => d!.fetch('/external/smart/v1/chat/completions', { method: 'POST', key: u.key, json: { model: 'best-cheap-llm', messages } });
    // its first call: the cheapest (openai) fails on both keys, anthropic serves it
    up.set(KA, '500');
    up.set(KB, '500');
    expect((await smart(convo)).headers.get('x-smart-route-provider')).toBe('anthropic');
    up.set(KA, 'ok');
    up.set(KB, 'ok');
    // later turns of the same conversation stay on anthropic although openai is cheaper again
    const turns = [...convo, { role: 'assistant', content: 'Where to?' }, { role: 'user', content: 'Rome.' }];
    for (let i = 0; i < 3; i++) expect((await smart(turns)).headers.get('x-smart-route-provider')).toBe('anthropic');
    // a new conversation starts cheapest-first
    expect((await smart([{ role: 'user', content: 'Something else.' }])).headers.get('x-smart-route-provider')).toBe('openai');
  });
});
