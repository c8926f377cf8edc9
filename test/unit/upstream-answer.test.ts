import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamAbort, UpstreamError, Upstreams } from '../../src/daemon/gateway/upstream.js';
import { UpstreamAnswer } from '../../src/daemon/gateway/upstream-answer.js';
import { readBody } from '../../src/daemon/gateway/relay.js';

/**
 * Upstream answers through undici's dispatch (gateway/upstream-answer.ts): the body is read
 * whole without a stream, or as a stream made on first use, and the abort switch and a
 * reader that leaves both end the upstream request.
 */
let server: http.Server;
let base: string;
/** requests whose answer was cut off by agw's side (the upstream saw its socket close) */
const closedEarly: string[] = [];
let connections = 0;
const BIG = Buffer.alloc(1 << 20, 'a'); // 1 MiB, many times a paused socket's buffer

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.url === '/json') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-upstream': 'yes' });
        res.end('{"usage":{"prompt_tokens":3}}');
      } else if (req.url === '/chunks') {
        // three chunks 30 ms apart, the last one ends the answer
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        let i = 0;
        const next = () => {
          res.write(`data: ${i}\n\n`);
          if (++i < 3) setTimeout(next, 30);
          else res.end();
        };
        next();
      } else if (req.url === '/slow-body' || req.url === '/endless') {
        res.writeHead(200, { 'content-type': req.url === '/endless' ? 'text/event-stream' : 'application/json' });
        res.write('{"partial":');
        const t = setInterval(() => res.write(' '), 20);
        res.on('close', () => {
          clearInterval(t);
          if (!res.writableFinished) closedEarly.push(req.url!);
        });
      } else if (req.url === '/big') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(BIG);
      } else if (req.url === '/never') {
        // no answer at all
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const provider = () => ({ baseUrl: base, apiKey: 'sk-test', def: { auth: { style: 'bearer' } } }) as never;
const upstreams = () => new Upstreams({ connectTimeoutMs: 2_000, responseTimeoutMs: 2_000 });

describe('upstream answers', () => {
  it('a JSON answer is read whole without a stream, with its status and headers', async () => {
    const u = upstreams();
    const res = await u.request(provider(), { method: 'POST', path: '/json', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(res).toBeInstanceOf(UpstreamAnswer);
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-upstream']).toBe('yes');
    expect((await readBody(res)).toString()).toBe('{"usage":{"prompt_tokens":3}}');
    await u.close();
  });

  it('the body as a stream yields every chunk, those that came before it was asked for too', async () => {
    const u = upstreams();
    const res = await u.request(provider(), { method: 'POST', path: '/chunks', headers: {}, body: '{}' });
    await new Promise((r) => setTimeout(r, 45)); // the first chunk(s) arrive before the stream exists
    const seen: string[] = [];
    for await (const c of res.body) seen.push(String(c));
    expect(seen.join('')).toBe('data: 0\n\ndata: 1\n\ndata: 2\n\n');
    await u.close();
  });

  it('the abort switch before the answer rejects the request as aborted', async () => {
    const u = upstreams();
    const signal = new UpstreamAbort();
    const p = u.request(provider(), { method: 'POST', path: '/never', headers: {}, body: '{}', signal });
    const t0 = Date.now();
    setTimeout(() => signal.abort(), 30);
    const err = await p.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect((err as UpstreamError).outcome).toBe('aborted');
    expect(Date.now() - t0).toBeLessThan(1_000); // at the abort, not at the 2 s headers timeout
    await u.close();
  });

  it('a request undici refuses before sending rejects, and leaves no listener on the abort switch', async () => {
    const u = upstreams();
    const signal = new UpstreamAbort();
    const err = await u.request(provider(), { method: 'POST', path: '/json', headers: { 'x-bad': 'a\r\nb' }, body: '{}', signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamError);
    expect(signal.listenerCount('abort')).toBe(0);
    await u.close();
  });

  it('the abort switch during the body fails the whole read and closes the upstream connection', async () => {
    const u = upstreams();
    const signal = new UpstreamAbort();
    const res = await u.request(provider(), { method: 'POST', path: '/slow-body', headers: {}, body: '{}', signal });
    const read = readBody(res);
    setTimeout(() => signal.abort(), 30);
    await expect(read).rejects.toMatchObject({ code: 'UND_ERR_ABORTED' });
    await waitFor(() => closedEarly.includes('/slow-body'));
    await u.close();
  });

  it('a reader that destroys the stream mid-way ends the upstream request', async () => {
    const u = upstreams();
    const res = await u.request(provider(), { method: 'POST', path: '/endless', headers: {}, body: '{}' });
    for await (const _ of res.body) break; // leaves after the first chunk: the iterator destroys the stream
    await waitFor(() => closedEarly.includes('/endless'));
    await u.close();
  });

  it('a body timeout fails the read', async () => {
    // a server that goes silent after its headers and first bytes
    const silent = http.createServer((_req, r) => {
      r.writeHead(200, { 'content-type': 'application/json' });
      r.write('{');
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const u2 = new Upstreams({ connectTimeoutMs: 2_000, responseTimeoutMs: 150 });
    const p = { baseUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}`, apiKey: 'k', def: { auth: { style: 'bearer' } } } as never;
    const answer = await u2.request(p, { method: 'POST', path: '/', headers: {}, body: '{}' });
    await expect(readBody(answer)).rejects.toMatchObject({ code: 'UND_ERR_BODY_TIMEOUT' });
    await u2.close();
    silent.closeAllConnections();
    await new Promise((r) => silent.close(r));
  });

  it('dump() reads a small answer to its end and the connection serves the next request', async () => {
    const u = upstreams();
    // still arriving when dumped: its chunks come 30 ms apart
    const res = await u.request(provider(), { method: 'POST', path: '/chunks', headers: {}, body: '{}' });
    const before = connections;
    await expect((res.body as unknown as { dump(): Promise<null> }).dump()).resolves.toBeNull();
    await new Promise((r) => setTimeout(r, 20)); // the pool marks its connection free on its next turn
    const again = await u.request(provider(), { method: 'POST', path: '/json', headers: {}, body: '{}' });
    expect((await readBody(again)).length).toBeGreaterThan(0);
    expect(connections).toBe(before); // no new connection: the dumped one was reused
    await u.close();
  });

  it('a body far larger than what is kept unread is read whole after a pause, every byte', async () => {
    const u = upstreams();
    const res = await u.request(provider(), { method: 'POST', path: '/big', headers: {}, body: '{}' });
    await new Promise((r) => setTimeout(r, 50)); // the socket is paused meanwhile
    expect((await readBody(res)).equals(BIG)).toBe(true);
    const streamed = await u.request(provider(), { method: 'POST', path: '/big', headers: {}, body: '{}' });
    await new Promise((r) => setTimeout(r, 50));
    let n = 0;
    for await (const c of streamed.body) n += (c as Buffer).length;
    expect(n).toBe(BIG.length);
    await u.close();
  });

  it('a body is read one way, once: whole twice, or as a stream after whole, is refused', async () => {
    const u = upstreams();
    const res = await u.request(provider(), { method: 'POST', path: '/json', headers: {}, body: '{}' });
    const first = readBody(res);
    await expect((res as UpstreamAnswer).whole()).rejects.toThrow(/already read/);
    expect(() => res.body).toThrow(/already read whole/);
    expect((await first).length).toBeGreaterThan(0);
    await u.close();
  });

  it('an answer that fails after its headers, dumped later, does not crash the process', async () => {
    // a 503 whose chunked body is malformed: the parser fails after the headers
    const bad = net.createServer((sock) => {
      sock.once('data', () => sock.write('HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'));
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    const crashes: unknown[] = [];
    const onCrash = (e: unknown) => crashes.push(e);
    process.on('uncaughtException', onCrash);
    try {
      const u = new Upstreams({ connectTimeoutMs: 2_000, responseTimeoutMs: 2_000 });
      const p = { baseUrl: `http://127.0.0.1:${(bad.address() as AddressInfo).port}`, apiKey: 'k', def: { auth: { style: 'bearer' } } } as never;
      const res = await u.request(p, { method: 'POST', path: '/', headers: {}, body: '{}' });
      expect(res.statusCode).toBe(503);
      await new Promise((r) => setTimeout(r, 50));
      await expect((res.body as unknown as { dump(): Promise<null> }).dump()).resolves.toBeNull();
      await new Promise((r) => setTimeout(r, 20));
      expect(crashes).toEqual([]);
      await u.close();
    } finally {
      process.off('uncaughtException', onCrash);
      await new Promise((r) => bad.close(r));
    }
  });
});

async function waitFor(ok: () => boolean, ms = 2_000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
