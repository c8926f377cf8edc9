import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens, openAiPromptTokens, simReply } from '../../src/daemon/demo/upstreams.js';
import { ANTHROPIC_KEY, OPENAI_KEY, headerDump, startGatewayFixture, usageRecords, usageTransactions, type GatewayFixture } from '../helpers/gateway-fixture.js';

/** The official clients, unchanged, pointed at agw with an agw_ key. */
let f: GatewayFixture;
let key: string;
let userId: string;
beforeAll(async () => {
  f = await startGatewayFixture();
  const u = await f.d.user({ tier: 'pro', balance: 5 });
  key = u.key;
  userId = u.id;
});
afterAll(async () => {
  await f?.close();
});

const question = 'Say hello to the SDK';

describe('official openai client', () => {
  it('chat.completions.create through the proxy (JSON and streaming)', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${f.d.api}/external/openai/v1`, maxRetries: 0 });
    const r = await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: question }] });
    expect(r.choices[0].message.content).toBe(simReply(question));
    expect(r.usage?.prompt_tokens).toBe(openAiPromptTokens([{ content: question }]));
    expect(f.openai.requests.at(-1)!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(headerDump(f.openai.requests.at(-1)!.headers)).not.toContain(key);

    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: question }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(simReply(question));
    expect(usage?.completion_tokens).toBe(countTokens(simReply(question)));
    const models = await client.models.list();
    expect(models.data.length).toBeGreaterThan(0);
  });

  it('chat.completions.create through the smart route (JSON and streaming)', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${f.d.api}/external/smart/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions
      .create({ model: 'best-quality-llm', messages: [{ role: 'system', content: 'Be kind.' }, { role: 'user', content: question }] })
      .withResponse();
    expect(response.headers.get('x-smart-route-provider')).toBe('anthropic');
    expect(data.choices[0].message.content).toBe(simReply(question));
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    const stream = await client.chat.completions.create({ model: 'best-cheap-llm', messages: [{ role: 'user', content: question }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(simReply(question));
  });

  it('errors surface as the SDK’s typed errors', async () => {
    const client = new OpenAI({ apiKey: 'agw_000000000000_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', baseURL: `${f.d.api}/external/smart/v1`, maxRetries: 0 });
    await expect(client.chat.completions.create({ model: 'best-cheap-llm', messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});

describe('official anthropic client', () => {
  it('messages.create through the proxy (JSON and streaming)', async () => {
    const client = new Anthropic({ apiKey: key, baseURL: `${f.d.api}/external/anthropic`, maxRetries: 0 });
    const m = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: question }] });
    expect(m.content[0].type === 'text' && m.content[0].text).toBe(simReply(question));
    const seen = f.anthropic.requests.at(-1)!;
    expect(seen.headers['x-api-key']).toBe(ANTHROPIC_KEY);
    expect(headerDump(seen.headers)).not.toContain(key);

    const stream = client.messages.stream({ model: 'claude-haiku-4-5', max_tokens: 200, messages: [{ role: 'user', content: question }] });
    let text = '';
    stream.on('text', (t) => (text += t));
    const final = await stream.finalMessage();
    expect(text).toBe(simReply(question));
    expect(final.usage.output_tokens).toBe(countTokens(simReply(question)));
  });
});

describe('bookkeeping after the SDK calls', () => {
  it('every successful metered call is one usage record, one wallet transaction and one quota unit', async () => {
    const recs = await usageRecords(f.db, userId);
    const txs = await usageTransactions(f.db, userId);
    expect(recs.length).toBe(6); // 2 openai proxy + 2 smart + 2 anthropic proxy (models.list is a free GET)
    expect(recs.every((r) => r.status === 'finalized')).toBe(true);
    expect(txs.map((t) => t.usageId).sort()).toEqual(recs.map((r) => r.id).sort());
    const used = await f.db.get<{ n: number }>("SELECT SUM(used) AS n FROM quota_counters WHERE user_id = ? AND usage_type = 'ai_chat'", [userId]);
    expect(Number(used?.n)).toBe(6);
  });
});
