import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simReply } from '../../src/daemon/demo/upstreams.js';
import { quotaUsed, startGatewayFixture, usageRecords, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';

/**
 * Issue #14 point 4: chat message content is a string or an array of the common format's
 * parts (text; image_url, file, input_audio for user turns since issue #28), accepted and
 * translated for both providers; anything else is 400 INVALID_REQUEST naming
 * `messages[i].content`, before any upstream is contacted and without billing.
 */
let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture();
});
afterAll(async () => {
  await f?.close();
});

const BAD: [string, unknown][] = [
  ['a number', 42],
  ['a boolean', true],
  ['null', null],
  ['an object', { text: 'hi' }],
  ['an empty array', []],
  ['an image part without a URL', [{ type: 'image_url', image_url: {} }]],
  ['an image part whose URL is neither data: nor http(s):', [{ type: 'image_url', image_url: { url: 'file:///etc/passwd' } }]],
  ['a part of a type the common format does not have', [{ type: 'video', video: {} }]],
  ['a text part without a string', [{ type: 'text', text: 42 }]],
  ['a string in an array', ['hello']],
];

describe.each([
  ['unified chat', '/gateway/chat', 'gpt-4o-mini'],
  ['unified chat (messages-style provider)', '/gateway/chat', 'claude-haiku-4-5'],
  ['smart route', '/external/smart/v1/chat/completions', 'best-cheap-llm'],
])('message content that is not text is refused before the upstream (%s)', (_name, path, model) => {
  it.each(BAD)('content as %s → 400 naming messages[1].content, nothing sent, nothing billed', async (_what, content) => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const before = f.openai.requests.length + f.anthropic.requests.length;
    const messages = [
      { role: 'user', content: 'fine' },
      { role: 'user', content },
    ];
    const res = await f.d.fetch(path, { method: 'POST', key: u.key, json: { model, messages } });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(400);
    expect(body.code).toBe('INVALID_REQUEST');
    expect(body.error).toContain('messages[1].content');
    expect(body.details).toEqual({ field: 'messages[1].content', location: 'body' });
    expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
    expect(await usageRecords(f.db, u.id)).toEqual([]);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    expect((await walletRow(f.db, u.id)).balance).toBe(1_000_000_000);
  });
});

describe('multi-part text content is accepted and translated', () => {
  const parts = [
    { type: 'text', text: 'What is the capital ' },
    { type: 'text', text: 'of France?' },
  ];
  const question = 'What is the capital of France?';

  it('the common-format provider gets the parts as they are', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: parts }] } });
    expect(res.status).toBe(200);
    expect((await res.json()).choices[0].message.content).toBe(simReply(question));
    expect(JSON.parse(f.openai.requests.at(-1)!.body).messages).toEqual([{ role: 'user', content: parts }]);
  });

  it('the messages-style provider gets them as text blocks, system parts included', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const messages = [
      { role: 'system', content: [{ type: 'text', text: 'Be terse.' }] },
      { role: 'system', content: 'Answer in English.' },
      { role: 'user', content: parts },
    ];
    const res = await f.d.fetch('/gateway/chat', { method: 'POST', key: u.key, json: { model: 'claude-haiku-4-5', messages } });
    expect(res.status).toBe(200);
    expect((await res.json()).content[0].text).toBe(simReply(question));
    const sent = JSON.parse(f.anthropic.requests.at(-1)!.body);
    expect(sent.system).toEqual([
      { type: 'text', text: 'Be terse.' },
      { type: 'text', text: 'Answer in English.' },
    ]);
    expect(sent.messages).toEqual([{ role: 'user', content: parts }]);
  });

  it('the official openai client sends multi-part text through the smart route to either provider', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const client = new OpenAI({ apiKey: u.key, baseURL: `${f.d.api}/external/smart/v1`, maxRetries: 0 });
    const content: OpenAI.ChatCompletionContentPartText[] = [
      { type: 'text', text: 'What is the capital ' },
      { type: 'text', text: 'of France?' },
    ];
    for (const [model, provider] of [
      ['best-cheap-llm', 'openai'],
      ['best-quality-llm', 'anthropic'],
    ] as const) {
      const { data, response } = await client.chat.completions
        .create({ model, messages: [{ role: 'system', content: [{ type: 'text', text: 'Be terse.' }] }, { role: 'user', content }] })
        .withResponse();
      expect(response.headers.get('x-smart-route-provider')).toBe(provider);
      expect(data.choices[0].message.content).toBe(simReply(question));
      const stream = await client.chat.completions.create({ model, messages: [{ role: 'user', content }], stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe(simReply(question));
    }
    // and a number as content is the SDK's BadRequestError, not a billed call
    await expect(
      client.chat.completions.create({ model: 'best-cheap-llm', messages: [{ role: 'user', content: 42 as unknown as string }] }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });
});
