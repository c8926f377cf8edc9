import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { runCli, spawnServe } from '../helpers/cli.js';

/**
 * Issue #33 item 8: a provider without a key is the operator's configuration, not a fault.
 * Its 503 carries `x-should-retry: false`, so the OpenAI and Anthropic SDKs ask once (one
 * record in the request log, naming the model asked for), and the daemon says so once, at
 * warn, without a stack.
 */
const data = mkdtempSync(join(tmpdir(), 'agw-opserr-'));
let serve: Awaited<ReturnType<typeof spawnServe>>;
let key: string;
const noKeys = { AGW_PROVIDER_OPENAI_KEY: undefined, AGW_PROVIDER_ANTHROPIC_KEY: undefined, AGW_PROVIDER_GROQ_KEY: undefined, AGW_CONFIG: undefined, AGW_STORE: undefined };

beforeAll(async () => {
  expect((await runCli(['admin', 'user', 'create', '--email', 'op@example.com', '--data', data, '--json'], { env: noKeys })).code).toBe(0);
  const k = await runCli(['admin', 'key', 'create', 'op@example.com', '--data', data, '--json'], { env: noKeys });
  key = JSON.parse(k.stdout).key;
  serve = await spawnServe(['--data', data], noKeys);
});
afterAll(async () => {
  await serve?.kill();
  rmSync(data, { recursive: true, force: true });
});

const requests = async () =>
  (await (await fetch(`${serve.url}/api/requests`, { headers: { authorization: `Bearer ${key}` } })).json()) as { items: { provider: string; model: string | null; code: string }[] };

test('the OpenAI SDK (maxRetries 2) asks once; the answer says not to retry; one record naming the model', async () => {
  const openai = new OpenAI({ baseURL: `${serve.url}/api/external/groq/openai/v1`, apiKey: key, maxRetries: 2 });
  const err = await openai.chat.completions.create({ model: 'llama-3.1-8b-instant', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
  expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('x-should-retry')).toBe('false');
  const items = (await requests()).items.filter((r) => r.provider === 'groq');
  expect(items).toHaveLength(1);
  expect(items[0]).toMatchObject({ code: 'PROVIDER_KEY_MISSING', model: 'llama-3.1-8b-instant' });
});

test('unified chat (ALPHA_KEY_MISSING) and the Anthropic SDK on the proxy (PROVIDER_KEY_MISSING): not retried either', async () => {
  const chat = await fetch(`${serve.url}/api/gateway/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(chat.status).toBe(503);
  expect(chat.headers.get('x-should-retry')).toBe('false');
  expect((await chat.json()).code).toBe('ALPHA_KEY_MISSING');

  const anthropic = new Anthropic({ baseURL: `${serve.url}/api/external/anthropic`, apiKey: key, maxRetries: 2 });
  const err = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
  expect((err as { status?: number }).status).toBe(503);
  expect((await requests()).items.filter((r) => r.provider === 'anthropic')).toHaveLength(1);
});

test('the daemon says it once per message, at warn, with no stack', async () => {
  // the same missing key again: nothing more in the log
  await fetch(`${serve.url}/api/external/groq/openai/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'llama-3.1-8b-instant', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await new Promise((r) => setTimeout(r, 300));
  const lines = serve
    .stderr()
    .split('\n')
    .filter((l) => l.includes('KEY_MISSING'))
    .map((l) => JSON.parse(l) as { level: number; msg: string; err?: unknown });
  const groq = lines.filter((l) => l.msg.includes('groq'));
  expect(groq).toHaveLength(1);
  expect(lines.every((l) => l.level === 40 && l.err === undefined && !JSON.stringify(l).includes('stack'))).toBe(true);
  expect(lines.length).toBe(3); // groq (proxy), openai (unified chat), anthropic (proxy)
});
