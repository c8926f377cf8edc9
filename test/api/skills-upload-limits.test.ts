import { readdirSync, readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestDaemon, type TestDaemon, type TestUser } from '../helpers/daemon.js';
import { bundle, json, publishForm } from './skills-helpers.js';

/**
 * Issue #14 point 1: an upload that stalls, ends early or is abandoned is answered within a
 * bounded time (408, or 400 for a body that ended without its closing boundary), and its
 * temp files and directory under DATA/tmp/uploads are removed at once, also when the client
 * disconnects; an account runs a bounded number of uploads at once (429 TOO_MANY_UPLOADS).
 * The daemon runs in this process, so its open files are /proc/self/fd.
 */
const IDLE = 300;
const DEADLINE = 1500;
let fast: TestDaemon; // short limits: the timeouts
let slow: TestDaemon; // long limits: disconnects and the per-account cap, with no timer firing
let fastUser: TestUser;
let slowUser: TestUser;

beforeAll(async () => {
  [fast, slow] = await Promise.all([
    startTestDaemon({ yaml: `marketplace: { uploadIdleTimeoutMs: ${IDLE}, uploadTimeoutMs: ${DEADLINE}, maxConcurrentUploads: 20 }\n` }),
    startTestDaemon({ yaml: 'marketplace: { uploadIdleTimeoutMs: 60000, uploadTimeoutMs: 120000, maxConcurrentUploads: 3 }\n' }),
  ]);
  [fastUser, slowUser] = await Promise.all([fast.user(), slow.user()]);
});
afterAll(async () => {
  await Promise.all([fast?.close(), slow?.close()]);
});

const uploads = (d: TestDaemon) => join(d.dataDir, 'tmp', 'uploads');
const tempDirs = (d: TestDaemon) => {
  try {
    return readdirSync(uploads(d));
  } catch {
    return [];
  }
};
/** Open file descriptors of this process (the daemon's) under the daemon's upload directory. */
const openUploads = (d: TestDaemon) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(uploads(d));
    } catch {
      return false;
    }
  }).length;

async function until(what: () => boolean, ms = 3000): Promise<void> {
  const end = Date.now() + ms;
  while (!what()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await delay(20);
  }
}

const FILE_HEAD = '--zz\r\ncontent-disposition: form-data; name="version"\r\n\r\n1.0.0\r\n--zz\r\ncontent-disposition: form-data; name="files"; filename="SKILL.md"\r\ncontent-type: text/plain\r\n\r\n';

interface Raw {
  socket: Socket;
  /** resolves with the raw answer once the server closes the connection */
  answer: Promise<string>;
  sentAt: number;
}

/** A POST /api/skills over a raw socket: `body` is sent, and the declared length may be more. */
function rawPublish(d: TestDaemon, key: string, body: string, opts: { length?: number; type?: string } = {}): Raw {
  const socket = connect(Number(new URL(d.url).port), '127.0.0.1');
  let text = '';
  socket.on('data', (c) => (text += c));
  socket.on('error', () => undefined);
  const answer = new Promise<string>((resolve) => socket.on('close', () => resolve(text)));
  socket.write(
    `POST /api/skills HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${key}\r\n` +
      `content-type: ${opts.type ?? 'multipart/form-data; boundary=zz'}\r\ncontent-length: ${opts.length ?? Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return { socket, answer, sentAt: Date.now() };
}

function parse(raw: string): { status: number; headers: string; body: any } {
  const [head, ...rest] = raw.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head.toLowerCase(), body: JSON.parse(rest.join('\r\n\r\n')) };
}

describe('a stalled or broken upload is answered in bounded time and leaves nothing behind', () => {
  it('multipart that stalls mid-file → 408 REQUEST_TIMEOUT after the idle timeout; file closed, directory removed, connection closed', async () => {
    const r = rawPublish(fast, fastUser.key, `${FILE_HEAD}half a fi`, { length: 100_000 });
    await until(() => openUploads(fast) === 1); // the temp file is open while the upload is live
    const res = parse(await r.answer);
    const took = Date.now() - r.sentAt;
    expect(res.status).toBe(408);
    expect(res.body.code).toBe('REQUEST_TIMEOUT');
    expect(res.headers).toContain('connection: close');
    expect(took).toBeGreaterThanOrEqual(IDLE - 50);
    expect(took).toBeLessThan(IDLE + 2000);
    await until(() => openUploads(fast) === 0 && tempDirs(fast).length === 0);
  });

  it('a body that ends without its closing boundary → 400 INVALID_REQUEST, cleaned up', async () => {
    const r = rawPublish(fast, fastUser.key, `${FILE_HEAD}the whole file, but no closing boundary`);
    const res = parse(await r.answer);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'body' } });
    expect(res.body.error).toContain('closing boundary');
    await until(() => openUploads(fast) === 0 && tempDirs(fast).length === 0);
  });

  it('a client that keeps sending a little never stalls, but meets the deadline → 408', async () => {
    const r = rawPublish(fast, fastUser.key, FILE_HEAD, { length: 100_000 });
    const trickle = setInterval(() => r.socket.write('x'), IDLE / 3);
    try {
      const res = parse(await r.answer);
      const took = Date.now() - r.sentAt;
      expect(res.status).toBe(408);
      expect(res.body.error).toContain('longer than');
      expect(took).toBeGreaterThanOrEqual(DEADLINE - 50);
      expect(took).toBeLessThan(DEADLINE + 2000);
    } finally {
      clearInterval(trickle);
    }
    await until(() => openUploads(fast) === 0 && tempDirs(fast).length === 0);
  });

  it('a JSON publish body that stalls → 408 too (no hang)', async () => {
    const r = rawPublish(fast, fastUser.key, '{"version":"1.0.0","files":[{"path":"SKILL.md","content":"', {
      length: 100_000,
      type: 'application/json',
    });
    const res = parse(await r.answer);
    expect(res.status).toBe(408);
    expect(res.body.code).toBe('REQUEST_TIMEOUT');
    expect(Date.now() - r.sentAt).toBeLessThan(IDLE + 2000);
  });

  it('a healthy upload still publishes (the limits only bound the bad ones)', async () => {
    const res = await publishForm(fast, fastUser.key, { version: '1.0.0', category: 'scene' }, bundle('bounded-skill'));
    expect(res.status, JSON.stringify(await json(res.clone()))).toBe(200);
    await until(() => tempDirs(fast).length === 0);
  });
});

describe('issue #33 item 2: a complete body without its closing boundary is answered at once', () => {
  // the slow daemon: its idle timeout is 60 s, so an answer within a second is not a timeout
  const cases: [string, string][] = [
    ['the issue\'s body: ends right after the last boundary', '--zz\r\nContent-Disposition: form-data; name="files"; filename="x"\r\n\r\nx\r\n--zz'],
    ['ends in the middle of a file', `${FILE_HEAD}complete body, no closing boundary`],
    ['ends after a boundary and its line break', '--zz\r\nContent-Disposition: form-data; name="version"\r\n\r\n1.0.0\r\n--zz\r\n'],
    ['ends inside a part\'s headers', '--zz\r\nContent-Disposition: form-data; name="files"; filena'],
    ['no boundary at all', 'just some bytes'],
  ];
  for (const [name, body] of cases) {
    it(`${name} → 400 within a second; no open files, no temp directory`, async () => {
      const r = rawPublish(slow, slowUser.key, body);
      const res = await Promise.race([r.answer.then(parse), delay(1000).then(() => null)]);
      r.socket.destroy();
      expect(res, 'no answer within 1 s').not.toBeNull();
      expect(res!.status).toBe(400);
      expect(res!.body).toMatchObject({ code: 'INVALID_REQUEST', details: { field: 'body' } });
      await until(() => openUploads(slow) === 0 && tempDirs(slow).length === 0, 1000);
    });
  }
});

describe('abandoned uploads and the per-account cap', () => {
  it('clients that disconnect mid-upload leave no open files or directories, at once', async () => {
    const raws = [0, 1, 2].map(() => rawPublish(slow, slowUser.key, `${FILE_HEAD}part of a file`, { length: 100_000 }));
    await until(() => openUploads(slow) === 3 && tempDirs(slow).length === 3);
    for (const r of raws) r.socket.destroy();
    await until(() => openUploads(slow) === 0 && tempDirs(slow).length === 0, 1000); // far before any timeout (60 s)
  });

  it('an unterminated body from a client that leaves before the answer: cleaned up at once', async () => {
    const r = rawPublish(slow, slowUser.key, `${FILE_HEAD}complete body, no closing boundary`);
    r.socket.destroy();
    await until(() => openUploads(slow) === 0 && tempDirs(slow).length === 0, 1000);
  });

  it('more uploads at once than allowed → 429 TOO_MANY_UPLOADS with Retry-After; slots come back when uploads end', async () => {
    const live = [0, 1, 2].map(() => rawPublish(slow, slowUser.key, `${FILE_HEAD}x`, { length: 100_000 }));
    await until(() => tempDirs(slow).length === 3);
    const refused = await publishForm(slow, slowUser.key, { version: '1.0.0', category: 'scene' }, bundle('capped-skill'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.headers.get('connection')).toBe('close');
    expect((await json(refused)).code).toBe('TOO_MANY_UPLOADS');
    const json429 = await slow.fetch('/skills', { method: 'POST', key: slowUser.key, json: { version: '1.0.0', files: [] } });
    expect(json429.status).toBe(429);
    // another account is not affected
    const other = await slow.user();
    const ok = await publishForm(slow, other.key, { version: '1.0.0', category: 'scene' }, bundle('other-skill'));
    expect(ok.status).toBe(200);
    for (const r of live) r.socket.destroy();
    await until(() => tempDirs(slow).length === 0);
    const again = await publishForm(slow, slowUser.key, { version: '1.0.0', category: 'scene' }, bundle('capped-skill'));
    expect(again.status).toBe(200);
  });
});
