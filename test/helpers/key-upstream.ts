import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback upstream that speaks the common chat format (POST /v1/chat/completions, JSON or
 * SSE with usage) and tells its callers apart by their key, as a provider account does:
 * each key can be told to answer normally, with 429 (and a Retry-After), with 500, or to
 * close the connection without an answer. Every request is recorded with the key it came
 * with. Unknown keys get 401.
 */
export type KeyBehaviour = 'ok' | '429' | '500' | 'close';

export interface KeyRequest {
  key: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface KeyUpstream {
  url: string;
  requests: KeyRequest[];
  set(key: string, b: KeyBehaviour, retryAfter?: string): void;
  /** how many requests each key got */
  counts(): Record<string, number>;
  close(): Promise<void>;
}

export const PROMPT_TOKENS = 12;
export const COMPLETION_TOKENS = 7;

export async function startKeyUpstream(keys: string[]): Promise<KeyUpstream> {
  const behaviour = new Map<string, { b: KeyBehaviour; retryAfter?: string }>(keys.map((k) => [k, { b: 'ok' }]));
  const requests: KeyRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const key = (req.headers.authorization ?? '').replace(/^Bearer /, '');
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ key, path: req.url ?? '', headers: req.headers, body });
      const how = behaviour.get(key);
      if (!how) {
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided' } }));
        return;
      }
      if (how.b === 'close') return req.socket.destroy();
      if (how.b === '429') {
        res.writeHead(429, { 'content-type': 'application/json', ...(how.retryAfter ? { 'retry-after': how.retryAfter } : {}) });
        return res.end(JSON.stringify({ error: { message: 'Rate limit reached for requests', type: 'requests' } }));
      }
      if (how.b === '500') {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'The server had an error' } }));
        return;
      }
      let parsed: { model?: string; stream?: boolean } = {};
      try {
        parsed = JSON.parse(body);
      } catch {
        /* answered anyway */
      }
      const model = parsed.model ?? 'gpt-4o-mini';
      const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: COMPLETION_TOKENS, total_tokens: PROMPT_TOKENS + COMPLETION_TOKENS };
      if (parsed.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model, choices: [{ index: 0, delta: { role: 'assistant', content: 'hello' } }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model, choices: [], usage })}\n\n`);
        return res.end('data: [DONE]\n\n');
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: `served by ${key.slice(-1)}` }, finish_reason: 'stop' }],
          usage,
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    set(key, b, retryAfter) {
      behaviour.set(key, { b, retryAfter });
    },
    counts() {
      const out: Record<string, number> = {};
      for (const r of requests) out[r.key] = (out[r.key] ?? 0) + 1;
      return out;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
