/**
 * The one error catalogue. Every UPPER_SNAKE code the spec and the contract name is
 * declared once here with its HTTP status; handlers throw `AgwError`s, one error
 * handler renders the spec's Error body `{error, code?, details?}`.
 */

export const ERROR_STATUS = {
  // generic
  INVALID_REQUEST: 400,
  INVALID_JSON: 400,
  INVALID_RANGE: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  STORE_UNAVAILABLE: 503,
  // gateway
  MISSING_MODEL: 400,
  MISSING_MESSAGES: 400,
  /** a field the resolved provider cannot honour, with X-Service-Strict-Params: 1 */
  UNSUPPORTED_PARAMETER: 400,
  INSUFFICIENT_FUNDS: 402,
  KEY_BUDGET_EXCEEDED: 402,
  KEY_EXPIRED: 401,
  MODEL_NOT_ALLOWED: 403,
  PROVIDER_NOT_FOUND: 404,
  PROJECT_NOT_FOUND: 404,
  REQUEST_NOT_FOUND: 404,
  QUOTA_EXCEEDED: 429,
  UPSTREAM_RATE_LIMITED: 429,
  ALPHA_KEY_MISSING: 503,
  BETA_KEY_MISSING: 503,
  PROVIDER_KEY_MISSING: 503,
  UPSTREAM_UNREACHABLE: 503,
  ALL_CANDIDATES_FAILED: 503,
  /** a batch job through the proxy: agw cannot meter it per call yet (docs/gateway.md "Batches") */
  BATCH_NOT_METERED: 501,
  /** a proxy path outside the provider's allowlist (catalog proxyPaths) or a cloud's configured scope */
  PROXY_PATH_NOT_ALLOWED: 403,
  /** a request asking for what the provider bills beyond the prices agw charges (money/unpriced.ts) */
  UNPRICED_FEATURE: 400,
  // wallet
  TOPUP_DISABLED: 403,
  // marketplace
  MISSING_SKILL_MD: 400,
  INVALID_BUNDLE: 400,
  BUNDLE_REJECTED: 400,
  INVALID_CATEGORY: 400,
  VERSION_EXISTS: 409,
  SLUG_TAKEN: 403,
  NOT_OWNER: 403,
  MASTER_TOKEN_CANNOT_PUBLISH: 403,
  SKILL_ARCHIVED: 403,
  NOT_INSTALLED: 403,
  SKILL_NOT_FOUND: 404,
  VERSION_NOT_FOUND: 404,
  /** a new install or download of a version its owner archived, by an account that never had it */
  VERSION_ARCHIVED: 403,
  /** making a draft or archived version current */
  VERSION_NOT_PUBLISHED: 409,
  /** archiving the only published version (archive the skill instead) */
  LAST_PUBLISHED_VERSION: 409,
  TOO_MANY_FILES: 413,
  TOO_MANY_UPLOADS: 429,
  FILE_TOO_LARGE: 413,
  BUNDLE_TOO_LARGE: 413,
  // portal / oauth
  INVALID_CREDENTIALS: 401,
  TOO_MANY_ATTEMPTS: 429,
  CSRF_FAILED: 403,
  INVALID_CLIENT: 400,
  INVALID_REDIRECT_URI: 400,
  INSUFFICIENT_SCOPE: 403,
  USER_NOT_FOUND: 404,
  KEY_NOT_FOUND: 404,
  /** a key made or changed with a limited key would get more than that key has */
  KEY_LIMITS_TOO_WIDE: 403,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * Codes that tell of the operator's configuration, not a passing fault: a retry gets the
 * same answer. They carry `x-should-retry: false` (the OpenAI and Anthropic SDKs honour it
 * and do not retry) and the daemon logs each once, at warn, without a stack.
 */
export const CONFIGURATION_ERRORS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['PROVIDER_KEY_MISSING', 'ALPHA_KEY_MISSING', 'BETA_KEY_MISSING']);

export interface ErrorBody {
  error: string;
  code?: string;
  details?: Record<string, unknown>;
}

export class AgwError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  /** Extra response headers (e.g. Retry-After). */
  readonly headers?: Record<string, string>;

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AgwError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.details = details;
    this.headers = CONFIGURATION_ERRORS.has(code) ? { 'x-should-retry': 'false', ...headers } : headers;
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { error: this.message, code: this.code };
    if (this.details) body.details = this.details;
    return body;
  }
}

export function agwError(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  headers?: Record<string, string>,
): AgwError {
  return new AgwError(code, message, details, headers);
}

export function isAgwError(e: unknown): e is AgwError {
  return e instanceof AgwError;
}
