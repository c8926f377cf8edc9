import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaUsed, startGatewayFixture, usageRecords, walletRow, type GatewayFixture } from '../helpers/gateway-fixture.js';
import type { TestUser } from '../helpers/daemon.js';

/**
 * Review finding M5: hostile bodies on every chat door are a clear 400 INVALID_REQUEST
 * naming the field (in the imitated API's error object on the two base URLs, the spec's
 * Error body elsewhere), never a 500: null where a converter expects an object, nesting
 * deep enough to overflow a recursive walk (20,000 nested tool_results, an `x` of 200,000
 * nested arrays), a text block whose text is an object. Nothing reaches an upstream,
 * nothing is reserved or charged, and no usage record is written.
 */
const YAML = `
aliases:
  to-claude: [ { provider: anthropic, model: claude-haiku-4-5 } ]
  to-gpt: [ { provider: openai, model: gpt-4o-mini } ]
smartRoutes:
  best-cheap-llm: [ { provider: anthropic, model: claude-haiku-4-5 } ]
  best-fast-llm: [ { provider: openai, model: gpt-4o-mini } ]
`;

let f: GatewayFixture;
beforeAll(async () => {
  f = await startGatewayFixture({ yaml: YAML });
});
afterAll(async () => {
  await f?.close();
});

type Door = { name: string; path: string; shape: 'spec' | 'openai' | 'anthropic'; headers?: Record<string, string> };
const COMMON_DOORS: Door[] = [
  { name: 'unified chat', path: '/gateway/chat', shape: 'spec' },
  { name: 'OpenAI base URL', path: '/gateway/v1/chat/completions', shape: 'openai' },
  { name: 'smart route', path: '/external/smart/v1/chat/completions', shape: 'spec' },
];
const MESSAGES_DOORS: Door[] = [
  { name: 'Anthropic base URL', path: '/gateway/v1/messages', shape: 'anthropic' },
  { name: 'count_tokens', path: '/gateway/v1/messages/count_tokens', shape: 'anthropic' },
];

/** The error's code and field, read from whichever error object the door answers with. */
function errorOf(door: Door, body: any): { code?: string; field?: string; message?: string } {
  if (door.shape === 'openai') return { code: body.error?.code, field: body.error?.param, message: body.error?.message };
  if (door.shape === 'anthropic') {
    expect(body.type).toBe('error');
    return { code: body.error?.code, field: body.error?.details?.field, message: body.error?.message };
  }
  return { code: body.code, field: body.details?.field, message: body.error };
}

/** Posts `text` (a raw JSON body), and checks the call is a 400 naming `field`, free, with nothing sent upstream. */
async function refused(u: TestUser, door: Door, text: string, field: string): Promise<void> {
  const before = f.openai.requests.length + f.anthropic.requests.length;
  const res = await fetch(`${f.d.api}${door.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json', ...door.headers },
    body: text,
  });
  const raw = await res.text();
  expect(res.status, `${door.name}: ${raw.slice(0, 300)}`).toBe(400);
  const e = errorOf(door, JSON.parse(raw));
  expect(e.code, raw.slice(0, 300)).toBe('INVALID_REQUEST');
  expect(e.field, raw.slice(0, 300)).toBe(field);
  expect(e.message).toContain(field);
  expect(raw.length).toBeLessThan(2000);
  expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
  expect(await usageRecords(f.db, u.id, { refused: true })).toEqual([]);
  expect(await quotaUsed(f.db, u.id)).toBe(0);
  expect((await walletRow(f.db, u.id)).balance).toBe(1_000_000_000);
}

/** `"x": [[[…]]]`, `depth` arrays deep, as JSON text. */
const deepArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** `depth` tool_results, each the only block of the one before's content (an image at the bottom). */
function nestedToolResults(depth: number): string {
  const open = '{"type":"tool_result","tool_use_id":"t","content":[';
  const image = '{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}}';
  return `${open.repeat(depth)}${image}${']}'.repeat(depth)}`;
}

/**
 * messages that is not an array (a string, an object, a number): a 400 at once, not a hang.
 * The doors' checks are callback hooks (fastify goes on only when they call done): an early
 * return that skipped done() left such a call unanswered until the request timeout.
 */
describe.each([...COMMON_DOORS, ...MESSAGES_DOORS])('messages that is not an array: $name', (door) => {
  it('is answered 400 INVALID_REQUEST within seconds, free, nothing sent upstream', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const model = door.path.includes('smart') ? 'best-fast-llm' : 'to-gpt';
    const before = f.openai.requests.length + f.anthropic.requests.length;
    for (const messages of ['hi', { role: 'user', content: 'hi' }, 7]) {
      const res = await fetch(`${f.d.api}${door.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${u.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, max_tokens: 10, messages }),
        signal: AbortSignal.timeout(5_000),
      });
      const raw = await res.text();
      expect(res.status, `${door.name} ${JSON.stringify(messages)}: ${raw.slice(0, 300)}`).toBe(400);
      expect(errorOf(door, JSON.parse(raw)).code).toBe('INVALID_REQUEST');
    }
    expect(f.openai.requests.length + f.anthropic.requests.length).toBe(before);
    expect(await quotaUsed(f.db, u.id)).toBe(0);
    expect((await walletRow(f.db, u.id)).balance).toBe(1_000_000_000);
  });
});

describe.each(COMMON_DOORS)('hostile common-format bodies: $name', (door) => {
  const model = (target: 'claude' | 'gpt') => (door.path.includes('smart') ? (target === 'claude' ? 'best-cheap-llm' : 'best-fast-llm') : `to-${target}`);

  it('an unknown field nested 200,000 arrays deep → 400 naming it', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    for (const target of ['gpt', 'claude'] as const) {
      await refused(u, door, `{"model":"${model(target)}","messages":[{"role":"user","content":"hi"}],"x":${deepArrays(200_000)}}`, 'x');
    }
  });

  it('deep nesting inside a message (a tool schema 100 objects deep) → 400 naming the field', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const deep = `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`;
    const tools = `[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":${deep}}}}]`;
    await refused(u, door, `{"model":"${model('claude')}","messages":[{"role":"user","content":"hi"}],"tools":${tools}}`, 'tools');
  });

  it('thinking_blocks: [null] on an assistant turn → 400 naming it (to a messages-format target)', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', thinking_blocks: [null] },
      { role: 'user', content: 'again' },
    ];
    await refused(u, door, JSON.stringify({ model: model('claude'), messages }), 'messages[1].thinking_blocks[0]');
  });

  it('thinking_blocks that is not an array, or a block without a string thinking → 400', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const turn = (thinking_blocks: unknown) => [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello', thinking_blocks },
      { role: 'user', content: 'again' },
    ];
    await refused(u, door, JSON.stringify({ model: model('claude'), messages: turn({ type: 'thinking' }) }), 'messages[1].thinking_blocks');
    await refused(u, door, JSON.stringify({ model: model('claude'), messages: turn([{ type: 'thinking', thinking: { a: 1 }, signature: 's' }]) }), 'messages[1].thinking_blocks[0]');
  });
});

describe.each(MESSAGES_DOORS)('hostile Messages bodies: $name', (door) => {
  it('20,000 nested tool_results → 400 naming the message (to either format)', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    for (const model of ['to-gpt', 'to-claude']) {
      const text = `{"model":"${model}","max_tokens":10,"messages":[{"role":"user","content":[${nestedToolResults(20_000)}]}]}`;
      await refused(u, door, text, 'messages');
    }
  });

  it('an unknown field nested 200,000 arrays deep → 400 naming it', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    for (const model of ['to-gpt', 'to-claude']) {
      await refused(u, door, `{"model":"${model}","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"x":${deepArrays(200_000)}}`, 'x');
    }
  });

  it('tool_result content [null] → 400 naming the block', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [null] }] },
    ];
    for (const model of ['to-gpt', 'to-claude']) {
      await refused(u, door, JSON.stringify({ model, max_tokens: 10, messages }), 'messages[2].content[0].content[0]');
    }
  });

  it('a text block whose text is an object is refused, not sent as "[object Object]"', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    for (const model of ['to-gpt', 'to-claude']) {
      const messages = [{ role: 'user', content: [{ type: 'text', text: { a: 1 } }] }];
      await refused(u, door, JSON.stringify({ model, max_tokens: 10, messages }), 'messages[0].content[0].text');
      await refused(u, door, JSON.stringify({ model, max_tokens: 10, system: [{ type: 'text', text: 42 }], messages: [{ role: 'user', content: 'hi' }] }), 'system[0].text');
    }
  });

  it('blocks of the wrong shape (tool_use without a string id, an image without a source, a tool_result inside a tool_result) → 400', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const cases: [unknown[], string][] = [
      [[{ type: 'tool_use', id: 7, name: 'f', input: {} }], 'messages[0].content[0].id'],
      [[{ type: 'tool_use', id: 't', name: 'f', input: 'x' }], 'messages[0].content[0].input'],
      [[{ type: 'image', source: null }], 'messages[0].content[0].source'],
      [[{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'tool_result', tool_use_id: 'u', content: 'x' }] }], 'messages[0].content[0].content[0]'],
      [[{ type: 'thinking', thinking: ['a'], signature: 's' }], 'messages[0].content[0].thinking'],
    ];
    for (const [content, field] of cases) {
      await refused(u, door, JSON.stringify({ model: 'to-gpt', max_tokens: 10, messages: [{ role: 'user', content }] }), field);
    }
  });
});

describe('hostile bodies on the proxy', () => {
  it('a chat body nested deeper than the limit → 400 naming the field, nothing sent, nothing charged', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const door: Door = { name: 'proxy (anthropic)', path: '/external/anthropic/v1/messages', shape: 'spec' };
    await refused(u, door, `{"model":"claude-haiku-4-5","max_tokens":10,"messages":[{"role":"user","content":[${nestedToolResults(20_000)}]}]}`, 'messages');
    const oai: Door = { name: 'proxy (openai)', path: '/external/openai/v1/chat/completions', shape: 'spec' };
    await refused(u, oai, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":${deepArrays(200_000)}}`, 'x');
  });
});

describe('bodies that are deep but within the limit still work', () => {
  it('a tool schema 20 objects deep is carried to a messages-format target', async () => {
    const u = await f.d.user({ tier: 'pro', balance: 1 });
    const parameters = JSON.parse(`{"type":"object","properties":${'{"a":{"type":"object","properties":'.repeat(10)}{}${'}}'.repeat(10)}}`);
    const res = await f.d.fetch('/gateway/chat', {
      method: 'POST',
      key: u.key,
      json: { model: 'to-claude', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'f', parameters } }] },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(JSON.parse(f.anthropic.requests.at(-1)!.body).tools[0].input_schema).toEqual(parameters);
  });
});
