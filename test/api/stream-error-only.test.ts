import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaUsed, startGatewayFixture, usageRecords, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import { startScripted, type ScriptedUpstream } from '../helpers/scripted-upstream.js';
import { messages as anthropicWire } from '../helpers/wire-fixtures.js';

/**
 * Review (Low): a 200 stream whose only content is an error event (Anthropic's `event:
 * error`, https://docs.claude.com/en/docs/build-with-claude/streaming#error-events; an
 * OpenAI-style `data: {"error":…}`) delivered nothing and reported no usage: it is booked as
 * failed, free (it was charged the prompt estimate). A stream that generated text before
 * its error is still charged for what it streamed.
 */
let f: GatewayFixture;
let oai: ScriptedUpstream;
let anth: ScriptedUpstream;
beforeAll(async () => {
  oai = await startScripted();
  anth = await startScripted();
  f = await startGatewayFixture({
    yaml: 'aliases:\n  to-gpt: [ { provider: openai, model: gpt-4o-mini } ]\n  to-claude: [ { provider: anthropic, model: claude-haiku-4-5 } ]\n',
    env: { AGW_PROVIDER_OPENAI_BASE_URL: oai.url, AGW_PROVIDER_ANTHROPIC_BASE_URL: anth.url },
  });
});
afterAll(async () => {
  await f?.close();
  await oai?.close();
  await anth?.close();
});

const ANTHROPIC_ERROR = ['event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'];
const OPENAI_ERROR = ['data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","code":null}}\n\n', 'data: [DONE]\n\n'];
const ask = [{ role: 'user', content: 'Write a long poem about the sea, please.' }];

async function expectFree(userId: string) {
  const recs = await usageRecords(f.db, userId);
  expect(recs.map((r) => [r.status, r.customer])).toEqual([['failed', 0]]);
  expect(await quotaUsed(f.db, userId)).toBe(0);
  expect((await walletRow(f.db, userId)).balance).toBe(1_000_000_000);
}

describe('a 200 stream that is only an error event', () => {
  it.each([
    ['unified chat, messages format', '/gateway/chat', 'to-claude', 'anthropic'],
    ['Anthropic base URL', '/gateway/v1/messages', 'to-claude', 'anthropic'],
    ['OpenAI base URL, to a messages-format target', '/gateway/v1/chat/completions', 'to-claude', 'anthropic'],
    ['unified chat, common format', '/gateway/chat', 'to-gpt', 'openai'],
    ['proxy, messages format', '/external/anthropic/v1/messages', 'claude-haiku-4-5', 'anthropic'],
    ['proxy, common format', '/external/openai/v1/chat/completions', 'gpt-4o-mini', 'openai'],
  ])('%s: booked failed, free', async (_what, path, model, upstream) => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    (upstream === 'anthropic' ? anth : oai).queue({ sse: upstream === 'anthropic' ? ANTHROPIC_ERROR : OPENAI_ERROR });
    const res = await f.d.fetch(path, { method: 'POST', key: u.key, json: { model, max_tokens: 1000, stream: true, messages: ask } });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('rror');
    await expectFree(u.id);
  });

  it('a stream with text before its error is charged for what it streamed', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const frames = anthropicWire.streamText('claude-haiku-4-5', ['The sea, the sea, ', 'it rolls and rolls']).slice(0, 4);
    anth.queue({ sse: [...frames, ...ANTHROPIC_ERROR] });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'to-claude', max_tokens: 1000, stream: true, messages: ask } });
    await res.text();
    const recs = await usageRecords(f.db, u.id);
    expect(recs.map((r) => r.status)).toEqual(['finalized']);
    expect(recs[0].customer).toBeGreaterThan(0);
  });
});
