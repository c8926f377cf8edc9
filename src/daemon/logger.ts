import { isMainThread } from 'node:worker_threads';
import pino, { type Logger } from 'pino';

/** Paths whose values are secrets: never written to a log. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
  '*.apiKey',
  '*.secretAccessKey',
  '*.sessionToken',
  '*.serviceAccount',
  '*.private_key',
  '*.password',
  '*.masterToken',
  '*.key',
  '*.token',
  '*.access_token',
  '*.refresh_token',
  'apiKey',
  'password',
  'key',
  'token',
];

interface LoggedRequest {
  method?: string;
  url?: string;
  ip?: string;
  headers?: Record<string, unknown>;
}

/**
 * Structured JSON logs on stderr (stdout is kept for the `listening` line and --json
 * output). Request lines (debug level only) carry the headers, with credentials redacted.
 */
export function createLogger(level: string, opts: { hold?: boolean } = {}): Logger {
  const destination = pino.destination({ fd: 2, sync: false });
  const held = opts.hold ? new HeldLines(destination) : undefined;
  // pino writes out what an asynchronous destination still holds at exit on the main
  // thread only; `agw serve` runs the daemon in a worker (src/cli/serve-host.ts)
  if (!isMainThread || held)
    process.once('exit', () => {
      try {
        held?.release();
        destination.flushSync();
      } catch {
        // already closed: nothing left to write
      }
    });
  const logger = pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'agw' },
      serializers: {
        req: (r: LoggedRequest) => ({ method: r.method, url: r.url, remoteAddress: r.ip, headers: { ...r.headers } }),
      },
    },
    held ?? destination,
  );
  if (held) heldOf.set(logger, held);
  return logger;
}

const heldOf = new WeakMap<Logger, HeldLines>();

/** Writes what a logger made with `hold` held back, and everything after at once. */
export function releaseLogs(logger: Logger): void {
  heldOf.get(logger)?.release();
}

/**
 * Log lines held back until `release()`, then written in order: `agw serve` on a terminal
 * prints its listening line and banner before the start-up's log lines. Bounded: released
 * by itself after 10 s or 1000 lines (whatever went wrong, nothing is lost or kept).
 */
class HeldLines {
  private lines: string[] | null = [];
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly out: { write(s: string): unknown }) {
    this.timer = setTimeout(() => this.release(), 10_000);
    this.timer.unref();
  }

  write(line: string): boolean {
    if (this.lines) {
      this.lines.push(line);
      if (this.lines.length >= 1000) this.release();
    } else this.out.write(line);
    return true;
  }

  release(): void {
    clearTimeout(this.timer);
    const lines = this.lines;
    this.lines = null;
    for (const l of lines ?? []) this.out.write(l);
  }
}

type LogFn = (obj: unknown, msg?: string, ...args: unknown[]) => void;
type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/**
 * A request's logger (fastify's `childLoggerFactory`) that becomes the real pino child
 * (`logger.child({ reqId })`) only when something logs through it. Making the child on
 * every request bound and redacted its bindings: ~2.5 KB of garbage and a few µs per
 * gateway call measured (the heap's largest single source on the proxy path), for a
 * logger that at the default level almost never writes. A line below the parent's level
 * is dropped without making the child; a child with options of its own (a route's log
 * level) is made at once. One small object per request: the methods are the class's.
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>, opts: Record<string, unknown>): Logger {
  if (Object.keys(opts).length) return parent.child(bindings, opts);
  return new LazyRequestLogger(parent, bindings) as unknown as Logger;
}

class LazyRequestLogger {
  private real: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly own: Record<string, unknown>,
  ) {}

  private get logger(): Logger {
    return (this.real ??= this.parent.child(this.own));
  }

  get level(): string {
    return (this.real ?? this.parent).level;
  }

  set level(l: string) {
    this.logger.level = l;
  }

  isLevelEnabled(l: string): boolean {
    return (this.real ?? this.parent).isLevelEnabled(l);
  }

  child(b: Record<string, unknown>, o?: Record<string, unknown>): Logger {
    return this.logger.child(b, o);
  }

  bindings(): Record<string, unknown> {
    return this.logger.bindings();
  }

  silent(): void {}

  fatal(...a: Parameters<LogFn>): void {
    this.write('fatal', a);
  }
  error(...a: Parameters<LogFn>): void {
    this.write('error', a);
  }
  warn(...a: Parameters<LogFn>): void {
    this.write('warn', a);
  }
  info(...a: Parameters<LogFn>): void {
    this.write('info', a);
  }
  debug(...a: Parameters<LogFn>): void {
    this.write('debug', a);
  }
  trace(...a: Parameters<LogFn>): void {
    this.write('trace', a);
  }

  private write(level: Level, args: Parameters<LogFn>): void {
    if (!this.isLevelEnabled(level)) return;
    (this.logger[level] as LogFn)(...args);
  }
}
