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
export function createLogger(level: string): Logger {
  const destination = pino.destination({ fd: 2, sync: false });
  // pino writes out what an asynchronous destination still holds at exit on the main
  // thread only; `agw serve` runs the daemon in a worker (src/cli/serve-host.ts)
  if (!isMainThread)
    process.once('exit', () => {
      try {
        destination.flushSync();
      } catch {
        // already closed: nothing left to write
      }
    });
  return pino(
    {
      level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'agw' },
      serializers: {
        req: (r: LoggedRequest) => ({ method: r.method, url: r.url, remoteAddress: r.ip, headers: { ...r.headers } }),
      },
    },
    destination,
  );
}
