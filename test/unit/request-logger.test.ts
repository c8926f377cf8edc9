import pino from 'pino';
import { Writable } from 'node:stream';
import { describe, expect, it, vi } from 'vitest';
import { lazyChildLogger, REDACT_PATHS } from '../../src/daemon/logger.js';

/**
 * Request loggers are made only when a request logs. What a request does log must come
 * out as from a real child: with its request id and with secrets redacted.
 */
function parentLogger(level: string): { log: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      cb();
    },
  });
  const log = pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink);
  return { log, lines };
}

const flush = () => new Promise((r) => setImmediate(r));

describe('lazyChildLogger', () => {
  it('makes no child for lines below the level, and logs the others with the request id, redacted', async () => {
    const { log, lines } = parentLogger('warn');
    const child = vi.spyOn(log, 'child');
    const req = lazyChildLogger(log, { reqId: 'req-7' }, {});
    req.info({ token: 'agw_secret' }, 'not written');
    req.debug('nor this');
    expect(req.isLevelEnabled('info')).toBe(false);
    expect(req.level).toBe('warn');
    expect(child).not.toHaveBeenCalled();

    req.error({ token: 'agw_secret', err: new Error('boom') }, 'request failed');
    req.warn('second line');
    await flush();
    expect(child).toHaveBeenCalledTimes(1);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ reqId: 'req-7', msg: 'request failed', token: '[redacted]' });
    expect(JSON.stringify(lines)).not.toContain('agw_secret');
    expect(lines[1]).toMatchObject({ reqId: 'req-7', msg: 'second line' });
  });

  it('a child of it carries both bindings; options of its own make the child at once', async () => {
    const { log, lines } = parentLogger('info');
    const req = lazyChildLogger(log, { reqId: 'req-8' }, {});
    req.child({ part: 'upstream' }).info('hello');
    await flush();
    expect(lines[0]).toMatchObject({ reqId: 'req-8', part: 'upstream', msg: 'hello' });

    const child = vi.spyOn(log, 'child');
    const quiet = lazyChildLogger(log, { reqId: 'req-9' }, { level: 'error' });
    expect(child).toHaveBeenCalledTimes(1);
    quiet.info('dropped: the route asked for errors only');
    await flush();
    expect(lines).toHaveLength(1);
  });
});
