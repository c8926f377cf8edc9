/**
 * Redaction of secrets in text agw keeps or shows (request-log bodies): every configured
 * secret (provider keys, the master token) wherever it appears, and what looks like a
 * credential whatever its value: agw_ keys, `Bearer …` tokens, JWTs, `sk-…` style
 * provider keys, and the values of JSON fields named like credentials (api_key,
 * authorization, password, secret, token, …). Each becomes `[redacted]`.
 */
import { REDACTED, SecretRedactor } from './secret-redactor.js';

const PATTERNS: RegExp[] = [
  /\bagw_[A-Za-z0-9_-]{8,}/g,
  /\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi,
  /\beyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]*/g,
  /\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}/g,
  /\b(AIza[0-9A-Za-z_-]{30,}|xai-[A-Za-z0-9]{20,}|gsk_[A-Za-z0-9]{20,})/g,
];
/** "api_key": "…", "Authorization": "…" and the like (JSON, any case, - or _). */
const FIELD = /("(?:[a-z0-9_-]*(?:api[_-]?key|secret|password|passwd|token)|authorization|x-api-key|cookie)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi;

export class Redactor {
  /** the configured secrets in any form (shared with the gateway: secret-redactor.ts) */
  private readonly secrets: SecretRedactor;

  /** `secrets`: the configured values to hide (shorter than 8 characters are ignored: they would match ordinary text). */
  constructor(secrets: Iterable<string | undefined>) {
    this.secrets = new SecretRedactor([...secrets].filter((s): s is string => !!s && s.length >= 8));
  }

  text(s: string): string {
    let out = this.secrets.text(s);
    out = out.replace(FIELD, `$1"${REDACTED}"`);
    for (const re of PATTERNS) out = out.replace(re, (m, scheme: unknown) => (typeof scheme === 'string' && /^(bearer|basic)$/i.test(scheme) ? `${scheme} ${REDACTED}` : REDACTED));
    return out;
  }
}
