import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicInputTokens, countTokens, simReply } from '../../src/daemon/demo/upstreams.js';
import { quotaUsed, sseData, startGatewayFixture, usageRecords, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';

/**
 * Issue 14 point 11: unified chat answers in the resolved provider's own shape (the spec's
 * default), so an alias that resolves to the messages-style provider gave an OpenAI client
 * something it cannot read. `X-Service-Response-Format: openai` opts into the common chat
 * shape for both providers, JSON and SSE.
 */
let f: GatewayFixture;
let u: TestUser;
beforeAll(async () => {
  f = await startGatewayFixture();
  u = await f.d.user({ tier: 'pro', balance: 5 });
});
afterAll(async () => {
  await f?.close();
});

const question = 'Which shape is this?';

/** The official OpenAI client on unified chat: its chat.completions path mapped to /api/gateway/chat. */
function client(format?: string): OpenAI {
  return new OpenAI({
    apiKey: u.key,
    baseURL: `${f.d.api}/gateway`,
    maxRetries: 0,
    defaultHeaders: format ? { 'X-Service-Response-Format': format } : {},
    fetch: (url, init) => fetch(String(url).replace(/\/chat\/completions$/, '/chat'), init),
  });
}

describe('X-Service-Response-Format: openai on unified chat', () => {
  it('the openai SDK reads an alias that resolves to the messages-style provider, JSON', async () => {
    const { data, response } = await client('openai')
      .chat.completions.create({ model: 'smart-pro', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: question }] })
      .withResponse();
    expect(response.headers.get('x-service-resolved-provider')).toBe('anthropic');
    expect(response.headers.get('x-service-resolved-via-alias')).toBe('1');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0].message).toMatchObject({ role: 'assistant', content: simReply(question) });
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.usage?.completion_tokens).toBe(countTokens(simReply(question)));
    // booked as any other call, against the concrete model
    const rec = (await usageRecords(f.db, u.id)).at(-1)!;
    expect(rec).toMatchObject({ status: 'finalized', provider: 'anthropic', model: 'claude-sonnet-4-5', alias: 'smart-pro', completion: countTokens(simReply(question)) });
  });

  it('the openai SDK streams it: common chunks, usage at the end, booked from the stream', async () => {
    const stream = await client('openai').chat.completions.create({ model: 'smart-pro', messages: [{ role: 'user', content: question }], stream: true });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(simReply(question));
    expect(finish).toBe('stop');
    expect(usage?.prompt_tokens).toBe(anthropicInputTokens(undefined, [{ role: 'user', content: question }]));
    expect(usage?.completion_tokens).toBe(countTokens(simReply(question)));
    const rec = (await usageRecords(f.db, u.id)).at(-1)!;
    expect(rec).toMatchObject({ status: 'finalized', provider: 'anthropic', completion: countTokens(simReply(question)) });
  });

  it('the common-format provider answers in the same shape with the header (JSON and SSE)', async () => {
    const r = await client('openai').chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0].message.content).toBe(simReply(question));
    const res = await f.d.fetch('/gateway/chat', {
      method: 'POST',
      key: u.key,
      headers: { 'x-service-response-format': 'openai' },
      json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }], stream: true },
    });
    const data = sseData(await res.text());
    expect(data.at(-1)).toBe('[DONE]');
    expect(JSON.parse(data[0]).object).toBe('chat.completion.chunk');
  });

  it('without the header (or with provider) the answer keeps the provider’s own shape, as the spec says', async () => {
    for (const headers of [{}, { 'x-service-response-format': 'provider' }]) {
      const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, headers, json: { model: 'smart-pro', messages: [{ role: 'user', content: question }] } });
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body.type).toBe('message');
      expect(body.content[0].text).toBe(simReply(question));
      const s = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, headers, json: { model: 'smart-pro', messages: [{ role: 'user', content: question }], stream: true } });
      expect(await s.text()).toContain('event: message_start');
    }
  });

  it('an unknown value is 400 INVALID_REQUEST naming the header, before anything is reserved or sent', async () => {
    const quota = await quotaUsed(f.db, u.id);
    const sent = f.anthropic.requests.length + f.openai.requests.length;
    for (const value of ['gemini', 'OpenAI-ish', 'json']) {
      const res = await f.d.fetch('/gateway/chat', {
        method: 'POST',
        key: u.key,
        headers: { 'x-service-response-format': value },
        json: { model: 'smart-pro', messages: [{ role: 'user', content: question }] },
      });
      expect(res.status).toBe(400);
      const body = await res.json();
      expect(body.code).toBe('INVALID_REQUEST');
      expect(body.error).toContain('x-service-response-format');
    }
    expect(await quotaUsed(f.db, u.id)).toBe(quota);
    expect(f.anthropic.requests.length + f.openai.requests.length).toBe(sent);
  });
});
