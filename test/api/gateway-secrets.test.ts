import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';

/**
 * Issue #14 point 2, the contract's "Secrets never reach a caller": an upstream that echoes
 * the credential it received (in full, masked, base64-encoded, inside the URL) has every
 * provider secret replaced by `[redacted]` in what agw passes back (non-2xx bodies, every
 * header, www-authenticate included) and in agw's own messages, for bearer, x-api-key and
 * query-parameter keys, through the proxy, unified chat and the smart route, JSON and
 * streamed.
 */
const KEYS = {
  openai: 'sk-proj-Q7f3a9c2e5b1d4f60a8e2XyZ0wV',
  anthropic: 'sk-ant-api03-9b8c7d6e5f4aQwErTy12uI',
  google: 'AIzaSyD4x9Kq2Lm8Np3Rt7Vw1Yz5Bc6',
};

interface Mode {
  status: number;
  stream?: boolean;
  gzip?: boolean;
  /** bytes of padding after the error (an upstream answering a huge error body) */
  pad?: number;
}
let mode: Mode = { status: 401 };
let echo: Server;
let td: TestDaemon;
let user: TestUser;

/** What the upstream received as its credential: the auth header or the query parameter. */
function credentialOf(req: IncomingMessage): string {
  const q = new URL(req.url!, 'http://x').searchParams.get('key');
  return q ?? String(req.headers.authorization ?? req.headers['x-api-key'] ?? req.headers['x-goog-api-key'] ?? '');
}

function answer(req: IncomingMessage, res: ServerResponse): void {
  const cred = credentialOf(req);
  const bare = cred.replace(/^Bearer /, '');
  const basic = Buffer.from(`user:${bare}`).toString('base64');
  const headers: Record<string, string> = {
    'www-authenticate': `Bearer realm="echo", error="invalid_token", error_description="bad key ${cred}"`,
    'x-echo-key': cred,
    'x-echo-basic': `Basic ${basic}`,
    'x-request-id': 'req_123',
  };
  if (mode.status === 200) {
    res.writeHead(200, { ...headers, 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'c1', object: 'chat.completion', model: 'gpt-4o-mini', choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }));
    return;
  }
  const error = {
    message: `Incorrect API key provided: ${cred}. Masked: ${bare.slice(0, 8)}****${bare.slice(-4)}. Basic ${basic}. URL ${req.url}`,
    type: 'invalid_request_error',
  };
  let body: Buffer = Buffer.from(mode.stream ? `event: error\ndata: ${JSON.stringify({ type: 'error', error })}\n\n` : JSON.stringify({ error }));
  if (mode.pad) body = Buffer.concat([body, Buffer.alloc(mode.pad, ' ')]);
  if (mode.gzip) {
    body = gzipSync(body);
    headers['content-encoding'] = 'gzip';
  }
  res.writeHead(mode.status, { ...headers, 'content-type': mode.stream ? 'text/event-stream' : 'application/json' });
  res.end(body);
}

beforeAll(async () => {
  echo = createServer((req, res) => {
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
  td = await startTestDaemon({
    env: {
      AGW_PROVIDER_OPENAI_KEY: KEYS.openai,
      AGW_PROVIDER_OPENAI_BASE_URL: url,
      AGW_PROVIDER_ANTHROPIC_KEY: KEYS.anthropic,
      AGW_PROVIDER_ANTHROPIC_BASE_URL: url,
      AGW_PROVIDER_GOOGLE_KEY: KEYS.google,
      AGW_PROVIDER_GOOGLE_BASE_URL: url,
    },
  });
  // no catalog provider authenticates with a query parameter today: make this daemon's google one do so
  const g = td.daemon.ctx.config.providers.get('google')!;
  td.daemon.ctx.config.providers.set('google', { ...g, def: { ...g.def, auth: { style: 'query', param: 'key' } } });
  user = await td.user({ tier: 'pro', balance: 10 });
});
afterAll(async () => {
  await td?.close();
  await new Promise((r) => echo?.close(r));
});

/** The whole answer as the caller sees it: status, every header, the body. */
async function seen(r: Response): Promise<string> {
  const headers = [...r.headers.entries()].map(([k, v]) => `${k}: ${v}`).join('\n');
  return `${r.status}\n${headers}\n\n${await r.text()}`;
}

/** The first piece of a key found in `text`: any 8 characters of it, or 12 of its base64 in a Basic echo. */
function leak(text: string): string | undefined {
  for (const key of Object.values(KEYS)) {
    for (let i = 0; i + 8 <= key.length; i++) if (text.includes(key.slice(i, i + 8))) return key.slice(i, i + 8);
    const b64 = Buffer.from(`user:${key}`).toString('base64').slice(8, -4);
    for (let i = 0; i + 12 <= b64.length; i++) if (text.includes(b64.slice(i, i + 12))) return b64.slice(i, i + 12);
  }
  return undefined;
}

async function expectRedacted(r: Response, status: number): Promise<string> {
  const text = await seen(r);
  expect(r.status, text).toBe(status);
  expect(leak(text), text).toBeUndefined();
  expect(text).toContain('[redacted]');
  return text;
}

const post = (path: string, json: unknown) => td.fetch(path, { method: 'POST', key: user.key, json });
const chatBody = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 });

describe('the proxy passes refusals back with every provider secret redacted', () => {
  it('an error answer of 20 MB is read only to its first MiB (never buffered whole), redacted', async () => {
    mode = { status: 400, pad: 20 * 1024 * 1024 };
    try {
      const r = await post('/external/openai/v1/chat/completions', chatBody('gpt-4o-mini'));
      const text = await expectRedacted(r, 400);
      expect(text.length).toBeLessThan(1024 * 1024 + 4096);
    } finally {
      mode = { status: 401 };
    }
  });

  it.each([
    ['bearer (openai)', '/external/openai/v1/chat/completions', chatBody('gpt-4o-mini')],
    ['x-api-key (anthropic)', '/external/anthropic/v1/messages', chatBody('claude-haiku-4-5')],
    ['query parameter (google, ?key=)', '/external/google/v1beta/models/gemini-2.5-flash:generateContent', { contents: [] }],
  ])('%s: JSON 401, body and headers (www-authenticate included)', async (_name, path, body) => {
    mode = { status: 401 };
    const r = await post(path, body);
    const text = await expectRedacted(r, 401);
    expect(text).toContain('Incorrect API key provided: ');
    expect(text).toContain('x-upstream-request-id: req_123'); // the rest passes unchanged (the provider's id under its own name)
    expect(r.headers.get('x-request-id')).toMatch(/^use_/); // agw's: the record of this call
    expect(text).toMatch(/www-authenticate: Bearer realm="echo", error="invalid_token", error_description="bad key (Bearer )?\[redacted\]"/);
  });

  it('a streamed request answered with an SSE error body', async () => {
    mode = { status: 401, stream: true };
    const text = await expectRedacted(await post('/external/openai/v1/chat/completions', chatBody('gpt-4o-mini', true)), 401);
    expect(text).toContain('event: error');
  });

  it('a compressed error body is decoded, redacted and sent uncompressed', async () => {
    mode = { status: 400, gzip: true };
    const r = await post('/external/anthropic/v1/messages', chatBody('claude-haiku-4-5'));
    expect(r.headers.get('content-encoding')).toBeNull();
    const text = await expectRedacted(r, 400);
    expect(text).toContain('Incorrect API key provided');
  });

  it('an unmetered GET (model list) answered 401', async () => {
    mode = { status: 401 };
    await expectRedacted(await td.fetch('/external/google/v1beta/models', { key: user.key }), 401);
    await expectRedacted(await td.fetch('/external/openai/v1/models', { key: user.key }), 401);
  });

  it('a 2xx answer: headers redacted, the body passed as it came', async () => {
    mode = { status: 200 };
    const r = await post('/external/openai/v1/chat/completions', chatBody('gpt-4o-mini'));
    const text = await expectRedacted(r, 200);
    expect(text).toContain('"content":"hi"');
  });
});

describe('agw’s own messages built from upstream text', () => {
  it.each([
    ['unified chat, bearer provider, 401', '/gateway/chat', chatBody('gpt-4o-mini'), 401, 503, 'UPSTREAM_UNREACHABLE'],
    ['unified chat, x-api-key provider, 401', '/gateway/chat', chatBody('claude-haiku-4-5'), 401, 503, 'UPSTREAM_UNREACHABLE'],
    ['unified chat, bearer provider, 400', '/gateway/chat', chatBody('gpt-4o-mini'), 400, 400, 'INVALID_REQUEST'],
    ['unified chat, x-api-key provider, 400, streamed', '/gateway/chat', chatBody('claude-haiku-4-5', true), 400, 400, 'INVALID_REQUEST'],
    ['smart route, bearer provider, 400', '/external/smart/v1/chat/completions', chatBody('best-cheap-llm'), 400, 400, 'INVALID_REQUEST'],
    ['smart route, x-api-key provider, 400, streamed', '/external/smart/v1/chat/completions', chatBody('best-quality-llm', true), 400, 400, 'INVALID_REQUEST'],
    ['smart route, every candidate 401', '/external/smart/v1/chat/completions', chatBody('best-cheap-llm'), 401, 503, 'ALL_CANDIDATES_FAILED'],
  ])('%s', async (name, path, body, upstream, status, code) => {
    mode = { status: upstream, stream: name.includes('streamed') };
    const r = await post(path, body);
    const text = await seen(r);
    expect(r.status, text).toBe(status);
    expect(leak(text), text).toBeUndefined();
    const err = JSON.parse(text.slice(text.indexOf('\n\n') + 2));
    expect(err.code).toBe(code);
    if (code !== 'ALL_CANDIDATES_FAILED') expect(err.error).toMatch(/Incorrect API key provided: (Bearer )?\[redacted\]/);
  });
});
