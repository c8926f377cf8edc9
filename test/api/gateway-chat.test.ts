import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicInputTokens, countTokens, openAiPromptTokens, simReply } from '../../src/daemon/demo/upstreams.js';
import {
  ANTHROPIC_KEY,
  OPENAI_KEY,
  expectedCostNano,
  headerDump,
  quotaUsed,
  startGatewayFixture,
  usageRecords,
  usageTransactions,
  walletRow,
  type GatewayFixture,
} from '../helpers/gateway-fixture.js';
import { usePostgres } from '../helpers/pg.js';

let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const messages = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'What is the capital of France?' },
];

describe('POST /api/gateway/chat (JSON)', () => {
  it('forwards a concrete model to the common-format provider with agw’s key and books the exact cost', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const before = f.openai.requests.length;
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages, temperature: 0.2, tools: [] } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-resolved-provider')).toBe('openai');
    expect(res.headers.get('x-service-resolved-model')).toBe('gpt-4o-mini');
    expect(res.headers.get('x-service-resolved-via-alias')).toBe('0');
    const body = await res.json();
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message.content).toBe(simReply('What is the capital of France?'));

    // what the upstream received: agw's provider key, never the caller's agw_ key
    expect(f.openai.requests.length).toBe(before + 1);
    const seen = f.openai.requests.at(-1)!;
    expect(seen.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(headerDump(seen.headers)).not.toContain(u.key);
    expect(headerDump(seen.headers)).not.toContain('agw_');
    const sent = JSON.parse(seen.body);
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.2, messages });
    expect(sent.stream_options).toBeUndefined();

    // exact wallet arithmetic: catalog prices x margin 2, sim token counts
    const prompt = openAiPromptTokens(messages);
    const completion = countTokens(simReply('What is the capital of France?'));
    expect(body.usage).toEqual({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
    const cost = expectedCostNano('openai', 'gpt-4o-mini', prompt, completion);
    expect(cost).toBeGreaterThan(0);
    const w = await walletRow(f.db, u.id);
    expect(w.balance).toBe(1_000_000_000 - cost); // free tier: no allowance, all from the balance
    const txs = await usageTransactions(f.db, u.id);
    expect(txs).toHaveLength(1);
    expect(txs[0]).toMatchObject({ amount: -cost, provider: 'openai', model: 'gpt-4o-mini', project: null });
    const recs = await usageRecords(f.db, u.id);
    expect(recs).toHaveLength(1);
    expect(recs[0]).toMatchObject({ status: 'finalized', provider: 'openai', model: 'gpt-4o-mini', prompt, completion, customer: cost, httpStatus: 200, usageType: 'ai_chat' });
    expect(recs[0].raw * 2).toBeCloseTo(cost, -1);
    expect(txs[0].usageId).toBe(recs[0].id);
    expect(await quotaUsed(f.db, u.id)).toBe(1);
  });

  it('resolves an alias to the messages-style provider and translates the body', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 5 });
    const res = await f.d.fetch('/gateway/chat', {
      method: 'POST',
      key: u.key,
      json: {
        model: 'smart-pro',
        messages,
        temperature: 1.5,
        top_p: 0.9,
        stop: ['END'],
        response_format: { type: 'json_object' },
        tools: [{ type: 'function', function: { name: 'capital', parameters: { type: 'object', properties: { country: { type: 'string' } } } } }],
      },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-service-resolved-provider')).toBe('anthropic');
    expect(res.headers.get('x-service-resolved-model')).toBe('claude-sonnet-4-5');
    expect(res.headers.get('x-service-resolved-via-alias')).toBe('1');
    const body = await res.json();
    expect(body.type).toBe('message'); // the provider's own shape
    const seen = f.anthropic.requests.at(-1)!;
    expect(seen.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(seen.headers['anthropic-version']).toBe('2023-06-01');
    expect(seen.headers.authorization).toBeUndefined();
    // the tool is carried; a JSON answer without a schema the messages format cannot promise: named as dropped
    expect(res.headers.get('x-service-dropped-params')).toBe('response_format');
    expect(JSON.parse(seen.body)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 64_000, // none asked: the model's output limit
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'What is the capital of France?' }],
      temperature: 1,
      top_p: 0.9,
      stop_sequences: ['END'],
      tools: [{ name: 'capital', input_schema: { type: 'object', properties: { country: { type: 'string' } } } }],
    });
    // pro tier: the $5 monthly allowance pays first, the balance is untouched
    const input = anthropicInputTokens('You are terse.', [{ role: 'user', content: 'What is the capital of France?' }]);
    const cost = expectedCostNano('anthropic', 'claude-sonnet-4-5', input, body.usage.output_tokens);
    expect(body.usage.input_tokens).toBe(input);
    const w = await walletRow(f.db, u.id);
    expect(w).toEqual({ balance: 5_000_000_000, allowanceUsed: cost });
    const recs = await usageRecords(f.db, u.id);
    expect(recs[0]).toMatchObject({ status: 'finalized', provider: 'anthropic', model: 'claude-sonnet-4-5', alias: 'smart-pro' });
  });

  it('books against the project of X-Service-Project-Id only when the caller has a role on it', async () => {
    const u = await f.d.user({ tier: 'free', balance: 1 });
    const other = await f.d.user({ tier: 'free', balance: 1 });
    const { createProject } = await import('../../src/daemon/store/projects.js');
    const mine = await f.db.tx((q) => createProject(q, u.id, 'mine'));
    const theirs = await f.db.tx((q) => createProject(q, other.id, 'theirs'));
    for (const uid of [mine.uid, theirs.uid]) {
      const res = await f.d.fetch('/gateway/chat', {
        method: 'POST',
        key: u.key,
        headers: { 'x-service-project-id': uid },
        json: { model: 'gpt-4o-mini', messages },
      });
      expect(res.status).toBe(200);
    }
    expect((await usageTransactions(f.db, u.id)).map((t) => t.project)).toEqual([mine.uid, null]);
    expect((await usageRecords(f.db, u.id)).map((r) => r.project)).toEqual([mine.uid, null]);
    expect(f.openai.requests.at(-1)!.headers['x-service-project-id']).toBeUndefined();
  });
});

describe('POST /api/gateway/chat refusals (nothing reaches the upstream, nothing is stored)', () => {
  const cases: [string, unknown, number, string, string?][] = [
    ['no model', { messages }, 400, 'MISSING_MODEL'],
    ['empty model', { model: '', messages }, 400, 'MISSING_MODEL'],
    ['no messages', { model: 'gpt-4o-mini' }, 400, 'MISSING_MESSAGES'],
    ['empty messages', { model: 'gpt-4o-mini', messages: [] }, 400, 'MISSING_MESSAGES'],
    ['temperature above 2', { model: 'gpt-4o-mini', messages, temperature: 2.5 }, 400, 'INVALID_REQUEST', 'temperature'],
    ['negative temperature', { model: 'gpt-4o-mini', messages, temperature: -0.1 }, 400, 'INVALID_REQUEST', 'temperature'],
    ['top_p above 1', { model: 'gpt-4o-mini', messages, top_p: 1.5 }, 400, 'INVALID_REQUEST', 'top_p'],
    ['max_tokens 0', { model: 'gpt-4o-mini', messages, max_tokens: 0 }, 400, 'INVALID_REQUEST', 'max_tokens'],
    ['max_tokens fractional', { model: 'gpt-4o-mini', messages, max_tokens: 1.5 }, 400, 'INVALID_REQUEST', 'max_tokens'],
    ['unknown role', { model: 'gpt-4o-mini', messages: [{ role: 'robot', content: 'hi' }] }, 400, 'INVALID_REQUEST', 'role'],
    ['message without content', { model: 'gpt-4o-mini', messages: [{ role: 'user' }] }, 400, 'INVALID_REQUEST', 'content'],
    ['unknown model', { model: 'no-such-model', messages }, 400, 'INVALID_REQUEST', 'model'],
    ['model above the tier bands', { model: 'gpt-4o', messages }, 403, 'MODEL_NOT_ALLOWED'],
    ['alias with every target above the tier bands', { model: 'smart-premium', messages }, 403, 'MODEL_NOT_ALLOWED'],
  ];
  for (const [name, json, status, code, field] of cases) {
    it(`${name} → ${status} ${code}`, async () => {
      const u = await f.d.user({ tier: 'free', balance: 1 });
      const before = f.openai.requests.length + f.anthropic.requests.length;
      const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json });
      expect(res.status).toBe(status);
      const body = await res.json();
      expect(body.code).toBe(code);
      expect(typeof body.error).toBe('string');
      if (field) expect(body.error).toContain(field);
      expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
      expect(await usageRecords(f.db, u.id)).toEqual([]);
      expect(await quotaUsed(f.db, u.id)).toBe(0);
      expect(await walletRow(f.db, u.id)).toEqual({ balance: 1_000_000_000, allowanceUsed: 0 });
    });
  }

  it('401 without credentials or with a revoked key, before validation', async () => {
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', json: {} });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe('UNAUTHORIZED');
    const bad = await f.d.fetch('/gateway/chat', { method: 'POST', key: 'agw_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', json: { model: 'gpt-4o-mini', messages } });
    expect(bad.status).toBe(401);
  });

  it('402 INSUFFICIENT_FUNDS with balance, currency and monthlyAllowance; no quota taken', async () => {
    const u = await f.d.user({ tier: 'free' });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(body).toMatchObject({
      code: 'INSUFFICIENT_FUNDS',
      details: { balance: 0, currency: 'USD', monthlyAllowance: 0, held: 0, available: 0, maxAffordableTokens: 0 },
    });
    expect(body.details.required).toBeGreaterThan(0);
    expect(body.error).toMatch(/may cost up to \$[0-9.]+ and \$0\.00 is available/);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    expect(await usageRecords(f.db, u.id)).toEqual([]);
    // the request log keeps the refusal, free
    expect(await usageRecords(f.db, u.id, { refused: true })).toMatchObject([{ status: 'refused', answerStatus: 402, code: 'INSUFFICIENT_FUNDS', customer: 0 }]);
  });

  it('an unlimited wallet with no balance may call; the call is still recorded as a transaction', async () => {
    const u = await f.d.user({ tier: 'free', unlimited: true });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
    expect(res.status).toBe(200);
    expect(await walletRow(f.db, u.id)).toEqual({ balance: 0, allowanceUsed: 0 });
    expect(await usageTransactions(f.db, u.id)).toHaveLength(1);
  });
});

describe('POST /api/gateway/chat: a JSON answer that breaks off', () => {
  it('an upstream that dies halfway through its JSON body: 503 UPSTREAM_UNREACHABLE, nothing charged, the hold and the quota unit given back', async () => {
    // headers promise 2,000 bytes, 40 arrive, then the connection is cut
    const cut = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2000' });
        res.write('{"id":"chatcmpl-cut","object":"chat.comp');
        setTimeout(() => res.socket?.destroy(), 20);
      });
    });
    await new Promise<void>((r) => cut.listen(0, '127.0.0.1', r));
    const g = await startGatewayFixture({ env: { AGW_PROVIDER_OPENAI_BASE_URL: `http://127.0.0.1:${(cut.address() as AddressInfo).port}` } });
    try {
      const u = await g.d.user({ tier: 'pro', balance: 1 });
      const res = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages } });
      expect(res.status).toBe(503);
      expect((await res.json()).code).toBe('UPSTREAM_UNREACHABLE');
      expect(await walletRow(g.db, u.id)).toEqual({ balance: 1_000_000_000, allowanceUsed: 0 });
      expect(await usageTransactions(g.db, u.id)).toHaveLength(0);
      expect(await quotaUsed(g.db, u.id)).toBe(0);
      expect((await usageRecords(g.db, u.id)).map((r) => r.status)).toEqual(['failed']);
      // the next call is served as usual: nothing of the broken one is held
      const again = await g.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'claude-haiku-4-5', messages, max_tokens: 50 } });
      expect(again.status).toBe(200);
    } finally {
      await g.close();
      await new Promise((r) => cut.close(r));
    }
  });
});

describe('the call-phase marks (agw:call:phase, what bench/timeline.js times)', () => {
  /** The marks one call passes, its key already in memory (a first call fills the key cache). */
  async function marksOf(path: string, json: unknown): Promise<unknown[]> {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    expect((await f.d.fetch(path, { method: 'POST', key: u.key, json })).status).toBe(200);
    const seen: unknown[] = [];
    const onMark = (name: unknown) => seen.push(name);
    diagnostics.subscribe('agw:call:phase', onMark);
    try {
      const res = await f.d.fetch(path, { method: 'POST', key: u.key, json });
      expect(res.status).toBe(200);
      await res.text();
    } finally {
      diagnostics.unsubscribe('agw:call:phase', onMark);
    }
    return seen;
  }
  // the SQLite ledger writes a journal line; the PostgreSQL engine books in the database
  const journaled = usePostgres ? [] : ['journaled'];
  const after = ['handling', 'admitting', 'admitted', 'sending', 'answer-read', 'booking', ...journaled, 'booked', 'answered'];

  it('a chat call passes every mark once, in the order of its path (the fast lane: its body received whole, parsed, then checked)', async () => {
    expect(await marksOf('/gateway/chat', { model: 'gpt-4o-mini', messages })).toEqual(['authenticated', 'body', 'parsed', ...after]);
  });

  it('a proxy call passes every mark once, in the order of its path (its body received whole as raw bytes)', async () => {
    expect(await marksOf('/external/openai/v1/chat/completions', { model: 'gpt-4o-mini', messages })).toEqual(['authenticated', 'body', ...after]);
  });
});
