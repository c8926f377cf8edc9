/**
 * Why the store could not be opened: the daemon refuses to start and `agw` prints the
 * message, the hint and the code (exit 1) instead of a stack.
 */
export class StoreOpenError extends Error {
  override readonly name = 'StoreOpenError';
  constructor(
    readonly code: 'STORE_UNAVAILABLE' | 'SCHEMA_TOO_NEW' | 'SCHEMA_MISMATCH' | 'STORE_MIGRATION_FAILED' | 'INVALID_STORE_URL' | 'STORE_IN_USE',
    message: string,
    readonly hint: string,
  ) {
    super(message);
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE']);

/**
 * True for an error that says the database cannot be reached right now (connection
 * refused or lost, server shutting down, too many connections, no pooled connection
 * free within the connect timeout), as opposed to a bug or a constraint: the request
 * gets 503 STORE_UNAVAILABLE and may be retried, on this daemon or another.
 */
export function isStoreUnavailable(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | null;
  if (!err || typeof err !== 'object') return false;
  const code = typeof err.code === 'string' ? err.code : '';
  if (CONNECTION_CODES.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(code)) return true;
  const msg = typeof err.message === 'string' ? err.message : '';
  return /timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error/.test(msg);
}
