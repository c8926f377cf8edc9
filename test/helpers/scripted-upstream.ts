import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback upstream that answers from a script: each request takes the next queued
 * answer (a JSON body or SSE frames, as the provider documents them: see
 * wire-fixtures.ts), and is recorded with its path, query, headers and parsed body. An
 * empty queue answers 500, so a test never passes on an answer it did not script.
 */
export interface ScriptedRequest {
  method: string;
  path: string;
  query: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export type ScriptedAnswer = { status?: number; headers?: Record<string, string> } & ({ json: unknown } | { sse: string[] });

export interface ScriptedUpstream {
  url: string;
  requests: ScriptedRequest[];
  queue(...answers: ScriptedAnswer[]): void;
  /** the last request's body */
  last(): Record<string, unknown>;
  close(): Promise<void>;
}

export async function startScripted(): Promise<ScriptedUpstream> {
  const requests: ScriptedRequest[] = [];
  const answers: ScriptedAnswer[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (raw += c));
    req.on('end', () => {
      const [path, query = ''] = (req.url ?? '/').split('?');
      let body: Record<string, unknown> = {};
      try {
        body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      } catch {
        body = { raw };
      }
      requests.push({ method: req.method ?? 'GET', path, query, headers: req.headers, body });
      const a = answers.shift();
      if (!a) {
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":{"message":"no scripted answer"}}');
        return;
      }
      if ('json' in a) {
        res.writeHead(a.status ?? 200, { 'content-type': 'application/json', ...a.headers }).end(JSON.stringify(a.json));
        return;
      }
      res.writeHead(a.status ?? 200, { 'content-type': 'text/event-stream', ...a.headers });
      for (const f of a.sse) res.write(f);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    queue: (...a) => answers.push(...a),
    last: () => requests.at(-1)!.body,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
