/** What to do next after a server error: one hint per status / code. */

export interface ErrorInfo {
  status: number;
  code?: string;
  message: string;
  details?: Record<string, unknown>;
  retryAfter?: string | null;
  /** The auth mode the request used ('session' for portal endpoints). */
  auth?: string;
  /** Which credential was sent: a key from AGW_API_KEY, a key or an OAuth login stored for the profile, the portal session, or none. */
  credential?: 'env-key' | 'stored-key' | 'oauth' | 'session' | 'none';
}

/**
 * What to do about credentials the server refused, by where they came from: never "set
 * AGW_API_KEY" to someone whose AGW_API_KEY is the key refused.
 */
function refusedCredentials(e: ErrorInfo, expired: boolean): string {
  const why = expired ? 'has expired' : 'was refused (mistyped, revoked or expired)';
  switch (e.credential ?? (e.auth === 'session' ? 'session' : undefined)) {
    case 'env-key':
      return `the key in AGW_API_KEY ${why}: put a valid key there (agw keys create makes one), or unset AGW_API_KEY to use this profile's login (agw whoami)`;
    case 'stored-key':
      return `the key saved for this profile ${why}: log in again with agw login (browser) or agw login --with-token < key.txt`;
    case 'oauth':
      return 'your login was refused: log in again: agw login';
    case 'session':
      return 'log in to the portal: agw login --email YOU@example.com';
    default:
      return 'log in: agw login (browser), agw login --with-token < key.txt, or set AGW_API_KEY';
  }
}

/** `details.suggestions` of an error ("did you mean"), when the server sent some. */
const suggestions = (e: ErrorInfo): string[] =>
  Array.isArray(e.details?.suggestions) ? (e.details.suggestions as unknown[]).filter((x): x is string => typeof x === 'string') : [];

const money = (v: unknown) => (typeof v === 'number' ? `$${v.toFixed(2)}` : String(v));

export function hintFor(e: ErrorInfo, resetsAt?: string): string | undefined {
  const { status, code } = e;
  switch (code) {
    case 'INSUFFICIENT_FUNDS': {
      const d = e.details ?? {};
      const left = 'balance' in d ? ` (balance ${money(d.balance)}, monthly allowance ${money(d.monthlyAllowance)})` : '';
      return `top up: agw wallet topup AMOUNT, or in the portal, where the service allows it; otherwise ask its operator${left}`;
    }
    case 'TOPUP_DISABLED':
      return 'this service does not let accounts top themselves up: ask its operator to run agw admin wallet credit YOUR_EMAIL AMOUNT';
    case 'MODEL_NOT_ALLOWED':
      return e.message.includes('for this key')
        ? 'this key may call only the models it lists: see them with agw entitlements, or use another key'
        : 'your tier does not include this model: see the allowed aliases with agw entitlements, or upgrade your tier';
    case 'KEY_EXPIRED':
      return refusedCredentials(e, true);
    case 'KEY_LIMITS_TOO_WIDE':
      return 'a key made with a limited key stays within that key’s limits: ask for less, or use the account (agw login --email, or an unlimited key)';
    case 'KEY_NOT_FOUND':
      return 'list the keys you may manage: agw keys list';
    case 'QUOTA_EXCEEDED':
      return resetsAt ? `the quota resets at ${resetsAt}; upgrade your tier for more` : 'wait for the quota period to reset (agw entitlements shows when) or upgrade your tier';
    case 'VERSION_EXISTS':
      return 'publish a new --version, or replace this one with --overwrite';
    case 'SLUG_TAKEN':
      return 'another creator owns this slug: change "name" in SKILL.md';
    case 'NOT_OWNER':
      return 'only the skill’s owner can do this; check the profile with agw whoami';
    case 'MASTER_TOKEN_CANNOT_PUBLISH':
      return 'publish with a personal agw_ key: agw login --with-token';
    case 'SKILL_ARCHIVED':
      return 'the owner archived this skill; only accounts that installed it before can install it';
    case 'SKILL_NOT_FOUND': {
      const near = suggestions(e);
      return near.length ? `did you mean ${near.join(' or ')}? (agw skill search QUERY finds others)` : 'find skills with agw skill search QUERY';
    }
    case 'FORBIDDEN':
      if (e.message.includes('key with limits')) return 'log in as the account to see its spend (agw login, or a key without limits); this key’s own spend: agw keys list';
      break;
    case 'INVALID_REQUEST':
      if (e.details?.reason === 'no_such_model') {
        const near = suggestions(e);
        return `${near.length ? `did you mean ${near.join(' or ')}? ` : ''}agw aliases lists the aliases and models you can use`;
      }
      if (Array.isArray(e.details?.classes)) return `the smart route takes ${(e.details.classes as string[]).join(', ')}`;
      break;
    case 'INVALID_BUNDLE':
    case 'MISSING_SKILL_MD':
      return 'check the bundle locally: agw skill validate DIR';
    case 'BUNDLE_REJECTED':
      return 'the marketplace’s scan found what it refuses; see every finding locally: agw skill scan DIR';
    case 'INVALID_CATEGORY':
      return 'pick one of the marketplace categories, e.g. --category other';
    case 'TOO_MANY_FILES':
    case 'FILE_TOO_LARGE':
      return 'at most 200 files of 5 MB each; list what should not be published in .agwignore';
    case 'ALPHA_KEY_MISSING':
    case 'BETA_KEY_MISSING':
    case 'PROVIDER_KEY_MISSING':
      return 'the daemon has no upstream key for that provider: set AGW_PROVIDER_<ID>_KEY where agw serve runs';
    case 'INVALID_CREDENTIALS':
      return 'check the email and password, or log in with a key: agw login --with-token';
  }
  if (status === 401) return refusedCredentials(e, false);
  if (status === 402) return 'top up: agw wallet topup AMOUNT, or in the portal, where the service allows it; otherwise ask its operator';
  if (status === 403) return 'your account or tier does not allow this: agw entitlements shows what it includes';
  if (status === 429) return e.retryAfter ? `retry after ${e.retryAfter} s` : 'slow down and retry later';
  if (status >= 500) return 'the service or its upstream failed; retry later, or check the daemon log';
  return undefined;
}
