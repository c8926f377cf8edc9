import pino, { type Logger } from 'pino';

/** Paths whose values are secrets: never written to a log. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'headers["x-api-key"]',
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

/** Structured JSON logs on stderr (stdout is kept for the `listening` line and --json output). */
export function createLogger(level: string): Logger {
  return pino(
    { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'agw' } },
    pino.destination({ fd: 2, sync: false }),
  );
}
