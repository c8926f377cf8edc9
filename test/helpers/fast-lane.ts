import net from 'node:net';
import { expect } from 'vitest';
import { cachedKey } from '../../src/daemon/auth/key-cache.js';
import { laneOf } from '../../src/daemon/fast-lane/index.js';
import { usageTransactions, walletRow, type GatewayFixture } from './gateway-fixture.js';

/**
 * What the fast lane's tests share (test/api/proxy-fast-lane.test.ts, chat-fast-lane.test.ts):
 * the same request sent through fastify and through the lane and what a caller saw of each,
 * a body cut off halfway, a burst of parallel calls on a small wallet and its books.
 */
export interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * What a caller sees, with the values that differ from call to call masked (ids, dates, the
 * rate windows, and so the body's length: checked against the body as received instead).
 */
export async function seen(res: Response): Promise<Seen> {
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => {
    headers[k] = k === 'date' || k === 'x-request-id' || k === 'x-upstream-request-id' || k.startsWith('x-ratelimit-') ? '…' : v;
  });
  const raw = await res.text();
  if (headers['content-length'] !== undefined) {
    expect(Number(headers['content-length']), 'Content-Length is the body’s length').toBe(Buffer.byteLength(raw));
    headers['content-length'] = '…';
  }
  const body = raw.replace(/"(id|requestId|created)":\s*("[^"]*"|\d+)/g, '"$1":"…"').replace(/use_[0-9a-z]+/g, 'use_…');
  return { status: res.status, headers, body };
}

/** The lane's helpers for the fixture `fx()` returns (started in a beforeAll). */
export function laneHarness(fx: () => GatewayFixture) {
  const lane = () => laneOf(fx().d.daemon.ctx);

  function post(key: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
    return fx().d.fetch(path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body });
  }

  /**
   * The same request through fastify (the lane off), then through the lane: what each
   * answered. The lane took only the second; `replayed`: it handed that one back to fastify
   * (a fault found), else it answered it itself.
   */
  async function bothWays(key: string, path: string, body: string, o: { headers?: Record<string, string>; replayed?: boolean } = {}): Promise<[Seen, Seen]> {
    const { taken, replayed } = lane();
    lane().enabled = false;
    let viaFastify: Seen;
    try {
      viaFastify = await seen(await post(key, path, body, o.headers));
    } finally {
      lane().enabled = true;
    }
    expect(lane().taken).toBe(taken);
    const viaLane = await seen(await post(key, path, body, o.headers));
    expect(lane().taken).toBe(taken + 1);
    expect(lane().replayed, `${path} ${body.slice(0, 80)}: handed back to fastify`).toBe(replayed + (o.replayed ? 1 : 0));
    return [viaFastify, viaLane];
  }

  /** A POST to `path` (under /api) whose body stops after a few bytes of the 1,000 announced, then the client leaves; taken by the lane. */
  async function cutOffBody(key: string, path: string): Promise<void> {
    const taken = lane().taken;
    const { port } = new URL(fx().d.url);
    await new Promise<void>((resolve, reject) => {
      const s = net.connect(Number(port), '127.0.0.1', () => {
        s.write(`POST /api${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"model":`);
        setTimeout(() => s.destroy(), 50);
      });
      s.on('close', () => resolve());
      s.on('error', reject);
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(lane().taken).toBe(taken + 1);
  }

  /**
   * A call whose body comes in two pieces 30 ms apart (the head and half the body first):
   * the lane reads it whole as it arrives. Resolves with the answer's status and body.
   */
  async function bodyInTwoPieces(key: string, path: string, body: string): Promise<{ status: number; body: string }> {
    await keyInMemory(key);
    const taken = lane().taken;
    const { port } = new URL(fx().d.url);
    const raw = await new Promise<string>((resolve, reject) => {
      let got = '';
      const s = net.connect(Number(port), '127.0.0.1', () => {
        const half = body.length >> 1;
        s.write(`POST /api${path} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body.slice(0, half)}`);
        setTimeout(() => s.write(body.slice(half)), 30);
      });
      s.setEncoding('utf8');
      s.on('data', (c: string) => (got += c));
      s.on('end', () => resolve(got));
      s.on('error', reject);
    });
    expect(lane().taken).toBe(taken + 1);
    const at = raw.indexOf('\r\n\r\n');
    return { status: Number(raw.slice(9, 12)), body: raw.slice(at + 4) };
  }

  /**
   * Until `key` is in the daemon's memory at a store version that holds: on PostgreSQL the
   * agw_changed notifications of the test's own setup (a user, a wallet, quotas) can arrive
   * after the key was put in memory, and move the version under the calls that follow (which
   * then go through fastify, as they should, and not through the lane).
   */
  async function keyInMemory(key: string): Promise<void> {
    const db = fx().d.daemon.ctx.db;
    for (let i = 0; i < 40; i++) {
      if (cachedKey(db, key)) {
        await new Promise((r) => setTimeout(r, 100));
        if (cachedKey(db, key)) return;
      }
      // a GET (never the lane's) that puts the key in memory
      await (await fx().d.fetch('/gateway/v1/models', { headers: { authorization: `Bearer ${key}` } })).text();
    }
    throw new Error('the key did not stay in the daemon’s memory');
  }

  /**
   * 20 parallel calls through the lane (the upstream slow, so every hold is taken at once) by a
   * user whose wallet covers 4 of their holds: 4 served, 16 refused 402, the wallet never below
   * zero, exactly 4 debits, one per call, summing to what the wallet lost.
   */
  async function burstOnSmallWallet(user: { id: string; key: string }, path: string, body: string): Promise<void> {
    const f = fx();
    const credit = (await walletRow(f.db, user.id)).balance;
    await keyInMemory(user.key);
    const taken = lane().taken;
    f.openai.setMode('slow', { delayMs: 1500 });
    let answers: Response[];
    try {
      answers = await Promise.all(Array.from({ length: 20 }, () => post(user.key, path, body)));
    } finally {
      f.openai.setMode('ok');
    }
    expect(lane().taken).toBe(taken + 20);
    const statuses = answers.map((r) => r.status).sort();
    await Promise.all(answers.map((r) => r.text()));
    expect(statuses).toEqual([...Array(4).fill(200), ...Array(16).fill(402)]);
    const w = await walletRow(f.db, user.id);
    expect(w.balance).toBeGreaterThanOrEqual(0);
    const debits = await usageTransactions(f.db, user.id);
    expect(debits).toHaveLength(4);
    expect(new Set(debits.map((d) => d.usageId)).size).toBe(4);
    expect(credit - w.balance).toBe(-debits.reduce((s, d) => s + d.amount, 0));
  }

  return { lane, post, bothWays, cutOffBody, bodyInTwoPieces, burstOnSmallWallet };
}
