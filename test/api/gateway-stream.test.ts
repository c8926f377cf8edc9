import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicInputTokens, countTokens, openAiPromptTokens, simReply } from '../../src/daemon/demo/upstreams.js';
import {
  expectedCostNano,
  quotaUsed,
  sseData,
  startGatewayFixture,
  usageRecords,
  usageTransactions,
  walletRow,
  type GatewayFixture,
} from '../helpers/gateway-fixture.js';

let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const question = 'Tell me about the tides of the ocean';
const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: question },
];

describe('POST /api/gateway/chat with stream=true', () => {
  it('common format: injects include_usage, passes the chunk stream through, bills from the final usage chunk', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages, stream: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    expect(res.headers.get('x-service-resolved-provider')).toBe('openai');
    const text = await res.text();
    const sent = JSON.parse(f.openai.requests.at(-1)!.body);
    expect(sent.stream).toBe(true);
    expect(sent.stream_options).toEqual({ include_usage: true });
    const data = sseData(text);
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe(simReply(question));
    const prompt = openAiPromptTokens(messages);
    const completion = countTokens(simReply(question));
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    const cost = expectedCostNano('openai', 'gpt-4o-mini', prompt, completion);
    expect((await walletRow(f.db, u.id)).balance).toBe(1_000_000_000 - cost);
    expect((await usageRecords(f.db, u.id))[0]).toMatchObject({ status: 'finalized', prompt, completion, customer: cost });
    expect(await usageTransactions(f.db, u.id)).toHaveLength(1);
  });

  it('messages-style: the event stream comes back unchanged and is billed from message_start + message_delta', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'claude-haiku-4-5', messages, stream: true, max_tokens: 100 } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toMatch(/^event: message_start\n/);
    expect(text).toContain('event: message_delta');
    expect(text.trimEnd().endsWith('data: {"type":"message_stop"}')).toBe(true);
    const sent = JSON.parse(f.anthropic.requests.at(-1)!.body);
    expect(sent).toMatchObject({ model: 'claude-haiku-4-5', stream: true, max_tokens: 100, system: 'Be brief.' });
    expect(sent.stream_options).toBeUndefined();
    const input = anthropicInputTokens('Be brief.', [{ role: 'user', content: question }]);
    const output = countTokens(simReply(question));
    const cost = expectedCostNano('anthropic', 'claude-haiku-4-5', input, output);
    expect((await usageRecords(f.db, u.id))[0]).toMatchObject({ status: 'finalized', prompt: input, completion: output, customer: cost });
    expect((await walletRow(f.db, u.id)).allowanceUsed).toBe(cost);
  });

  it('a stream the upstream drops midway breaks off for the client too and books what was streamed, once', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    f.openai.setMode('drop_mid_stream');
    try {
      const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages, stream: true } });
      expect(res.status).toBe(200);
      await expect(res.text()).rejects.toThrow();
    } finally {
      f.openai.setMode('ok');
    }
    const recs = await waitFor(async () => {
      const r = await usageRecords(f.db, u.id);
      return r[0]?.status === 'finalized' ? r : undefined;
    });
    // usage never came: the prompt is booked at the hold's bound, the bytes of the body sent
    // (never below what the provider counts: the sim's own count is less)
    expect(recs[0].prompt).toBe(Buffer.byteLength(f.openai.requests.at(-1)!.body));
    expect(recs[0].prompt).toBeGreaterThan(openAiPromptTokens(messages));
    expect(recs[0].completion).toBeLessThan(countTokens(simReply(question)));
    expect(await usageTransactions(f.db, u.id)).toHaveLength(1);
    expect(await quotaUsed(f.db, u.id)).toBe(1);
  });
});

/** An upstream streaming 200 one-word chunks 20 ms apart, recording whether it was cut off. */
async function slowStreamer(): Promise<{ url: string; state: { closedEarly: boolean; written: number }; close(): Promise<void> }> {
  const state = { closedEarly: false, written: 0 };
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.on('close', () => {
        if (!res.writableFinished) state.closedEarly = true;
      });
      const timer = setInterval(() => {
        if (state.written >= 200) {
          clearInterval(timer);
          res.end('data: [DONE]\n\n');
          return;
        }
        state.written++;
        res.write(`data: {"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"word "}}]}\n\n`);
      }, 20);
      res.on('close', () => clearInterval(timer));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

async function waitFor<T>(fn: () => Promise<T | undefined>, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('an upstream that dies after its headers', () => {
  it('answers 503 UPSTREAM_UNREACHABLE and releases the reservation when no byte was streamed', async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        setTimeout(() => res.destroy(), 20);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const g = await startGatewayFixture({ env: { AGW_PROVIDER_OPENAI_BASE_URL: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } });
    try {
      const u = await g.d.user({ tier: 'free', balance: 1 });
      const res = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages, stream: true } });
      expect(res.status).toBe(503);
      expect((await res.json()).code).toBe('UPSTREAM_UNREACHABLE');
      expect((await usageRecords(g.db, u.id)).map((r) => r.status)).toEqual(['failed']);
      expect(await quotaUsed(g.db, u.id)).toBe(0);
      expect(await usageTransactions(g.db, u.id)).toEqual([]);
    } finally {
      await g.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe('client disconnect', () => {
  it('streams chunks as they arrive, aborts the upstream when the client goes, and books what was streamed once', async () => {
    const up = await slowStreamer();
    const g = await startGatewayFixture({ env: { AGW_PROVIDER_OPENAI_BASE_URL: up.url } });
    try {
      const u = await g.d.user({ tier: 'free', balance: 1 });
      const ac = new AbortController();
      const t0 = Date.now();
      const res = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages, stream: true }, signal: ac.signal });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      let received = '';
      while ((received.match(/word/g) ?? []).length < 5) received += new TextDecoder().decode((await reader.read()).value);
      // the first chunks arrive long before the 4 s the whole stream takes: no buffering
      expect(Date.now() - t0).toBeLessThan(1500);
      ac.abort();
      await waitFor(async () => (up.state.closedEarly ? true : undefined));
      expect(up.state.written).toBeLessThan(200);
      const recs = await waitFor(async () => {
        const r = await usageRecords(g.db, u.id);
        return r[0]?.status === 'finalized' ? r : undefined;
      });
      // estimate: ceil(chars of text seen / 4); at least the 5 words the client read
      expect(recs[0].completion).toBeGreaterThanOrEqual(Math.ceil((5 * 'word '.length) / 4));
      expect(recs[0].completion).toBeLessThan(Math.ceil((200 * 'word '.length) / 4));
      expect(recs[0].customer).toBe(expectedCostNano('openai', 'gpt-4o-mini', recs[0].prompt, recs[0].completion));
      await new Promise((r) => setTimeout(r, 200));
      expect(await usageTransactions(g.db, u.id)).toHaveLength(1);
      expect(await quotaUsed(g.db, u.id)).toBe(1);
    } finally {
      await g.close();
      await up.close();
    }
  });
});
