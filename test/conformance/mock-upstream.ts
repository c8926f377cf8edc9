import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Fixture } from './load.js';

/** One request as the mock provider received it. */
export interface Received {
  method: string;
  /** path and query string */
  path: string;
  headers: IncomingMessage['headers'];
  /** the parsed JSON body (undefined when it is not JSON) */
  body: Record<string, unknown> | undefined;
}

/**
 * A loopback stand-in for one provider: it answers every POST with the fixture queued by
 * `serve` (a JSON answer, or a stream sent as the provider sends it) and records what it
 * received. Nothing leaves 127.0.0.1. Used by the conformance runner and the client tests.
 */
export interface MockUpstream {
  url: string;
  received: Received[];
  /** what the next calls are answered with (until changed) */
  serve(answer: Fixture | ((req: Received) => Fixture)): void;
  close(): Promise<void>;
}

export async function startMockUpstream(): Promise<MockUpstream> {
  const received: Received[] = [];
  let answer: Fixture | ((req: Received) => Fixture) | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: Record<string, unknown> | undefined;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
      } catch {
        body = undefined;
      }
      const r: Received = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body };
      received.push(r);
      const f = typeof answer === 'function' ? answer(r) : answer;
      if (req.method !== 'POST' || !f) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'the mock has no answer for this' } }));
        return;
      }
      if (f.kind === 'json') {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(f.body));
        return;
      }
      // event by event, as a provider flushes them (an AWS event stream frame by frame)
      const events: (string | Buffer)[] = f.frames ?? f.wire.split(/(?<=\n\n)/);
      res.writeHead(200, f.frames ? { 'content-type': 'application/vnd.amazon.eventstream' } : { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      let i = 0;
      const next = () => {
        if (i >= events.length) return void res.end();
        res.write(events[i++]);
        setImmediate(next);
      };
      next();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    serve(a) {
      answer = a;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
