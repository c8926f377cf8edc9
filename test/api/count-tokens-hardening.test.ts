import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayFixture, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';

/**
 * Review (Low), POST /gateway/v1/messages/count_tokens: a 2xx from the provider that is not
 * the count (not JSON, or no input_tokens) is 503 UPSTREAM_UNREACHABLE in Anthropic's error
 * object, never a 500; and a key with a rate limit cannot spend the operator's count_tokens
 * rate at the provider: it asks the provider at most its rpm a minute (on this daemon), and
 * past that, or while its own request window is empty, gets the gateway's estimate. Free
 * either way.
 */
let f: GatewayFixture;
let anth: ScriptedUpstream;
let u: TestUser;
beforeAll(async () => {
  anth = await startScripted();
  f = await startGatewayFixture({ env: { AGW_PROVIDER_ANTHROPIC_BASE_URL: anth.url } });
  u = await f.d.user({ tier: 'pro', balance: 5 });
});
afterAll(async () => {
  await f?.close();
  await anth?.close();
});

const body = { model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'How many tokens is this?' }] };
const count = (key: string) => f.d.fetch('/gateway/v1/messages/count_tokens', { method: 'POST', key, json: body });

describe('an answer that is not the count', () => {
  it.each([
    ['a 200 that is not JSON', { status: 200, headers: { 'content-type': 'text/plain' }, sse: ['upstream says hi'] }],
    ['a 200 JSON without input_tokens', { json: { tokens: 12 } }],
  ])('%s: 503 UPSTREAM_UNREACHABLE in Anthropic’s error object', async (_what, answer) => {
    anth.queue(answer as Parameters<ScriptedUpstream['queue']>[0]);
    const res = await count(u.key);
    const text = await res.text();
    expect(res.status, text).toBe(503);
    expect(JSON.parse(text)).toMatchObject({ type: 'error', error: { type: 'overloaded_error', code: 'UPSTREAM_UNREACHABLE', message: expect.stringContaining('anthropic') } });
  });

  it('the provider’s count passes through when it is one', async () => {
    anth.queue({ json: { input_tokens: 17 } });
    const res = await count(u.key);
    expect(await res.json()).toEqual({ input_tokens: 17 });
    expect(anth.requests.at(-1)!.path).toBe('/v1/messages/count_tokens');
  });
});

describe('a key with a rate limit', () => {
  async function limitedKey(limits: Record<string, unknown>): Promise<string> {
    const res = await f.d.fetch('/keys', { method: 'POST', key: u.key, json: { name: 'limited', limits } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { key: string }).key;
  }

  it('asks the provider at most its rpm a minute; past that the estimate, free', async () => {
    const key = await limitedKey({ rpm: 3 });
    const before = anth.requests.length;
    anth.queue({ json: { input_tokens: 17 } }, { json: { input_tokens: 17 } }, { json: { input_tokens: 17 } });
    const answers: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await count(key);
      expect(res.status).toBe(200);
      answers.push(((await res.json()) as { input_tokens: number }).input_tokens);
    }
    expect(anth.requests.length - before).toBe(3);
    expect(answers.slice(0, 3)).toEqual([17, 17, 17]);
    for (const n of answers.slice(3)) expect(n).toBeGreaterThan(3); // the estimate: ceil(chars / 4) + 3
    const w = await (await f.d.fetch('/wallet', { key: u.key })).json();
    expect(w.balance).toBe(5);
  });

  it('a key whose own request window is empty gets the estimate without asking the provider', async () => {
    const key = await limitedKey({ rpm: 1 });
    anth.queue({ json: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-haiku-4-5', content: [{ type: 'text', text: 'hi' }], stop_reason: 'end_turn', usage: { input_tokens: 5, output_tokens: 1 } } });
    const chat = await f.d.fetch('/gateway/v1/messages', { method: 'POST', key, json: { ...body, max_tokens: 10 } });
    expect(chat.status).toBe(200);
    const before = anth.requests.length;
    const res = await count(key);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(3);
    expect(anth.requests.length).toBe(before);
  });
});
