import type { ProviderDef } from '../providers/types.js';
import type { ConfigProblem } from './load.js';

/**
 * A provider's keys (CONTRACT "Several keys per provider"): `providers.ID.keys` besides or
 * instead of `apiKey`. A plain `apiKey` (or env AGW_PROVIDER_<ID>_KEY) is one more key,
 * named `default`, first in the list; an unnamed key of `keys` is named by its position
 * (`key-1`, `key-2`, …). What a key holds depends on how the provider authenticates:
 * an API key, AWS access keys (bedrock) or a service account's key file (vertex).
 */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** The fields of a Google service account key file that agw uses. */
export interface ServiceAccount {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  project_id?: string;
  /** where the access token is obtained (default Google's token endpoint) */
  token_uri?: string;
}

/**
 * A key's runtime health, counted by the daemon (daemon/gateway/keys): kept on the key so
 * that a provider with one key needs no lookup to count its calls. The CLI never reads it.
 */
export interface KeyHealth {
  /** tries sent with this key, and those answered 429, 5xx or not at all */
  calls: number;
  failures: number;
  /** epoch ms until which the key sits out (0: healthy); failures in a row drive the backoff */
  coolingUntil: number;
  streak: number;
  /** smooth weighted round-robin: the key's current weight */
  current: number;
  /** token buckets of rpm / tpm: what is left, and when it was last refilled (epoch ms) */
  rpmLeft: number;
  tpmLeft: number;
  refilledAt: number;
}

export interface ProviderKey {
  name: string;
  weight: number;
  rpm: number | null;
  tpm: number | null;
  apiKey?: string;
  aws?: AwsCredentials;
  serviceAccount?: ServiceAccount;
  readonly health: KeyHealth;
}

/** One entry of `providers.ID.keys` as the schema admits it (also the top-level credentials). */
export interface KeyInput {
  apiKey?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
  serviceAccount?: string | Record<string, unknown>;
  name?: string;
  weight?: number;
  rpm?: number;
  tpm?: number;
}

/** What kind of credential a provider takes. */
export type CredentialKind = 'apiKey' | 'aws' | 'serviceAccount';

export function credentialKind(def: ProviderDef): CredentialKind {
  return def.auth.style === 'aws-sigv4' ? 'aws' : def.auth.style === 'google-service-account' ? 'serviceAccount' : 'apiKey';
}

export function newHealth(rpm: number | null, tpm: number | null): KeyHealth {
  return { calls: 0, failures: 0, coolingUntil: 0, streak: 0, current: 0, rpmLeft: rpm ?? 0, tpmLeft: tpm ?? 0, refilledAt: 0 };
}

/** A service account given as a mapping or as the key file's JSON text; problems name what is wrong. */
function serviceAccountOf(v: KeyInput['serviceAccount'], path: string, problems: ConfigProblem[]): ServiceAccount | undefined {
  let o: unknown = v;
  if (typeof v === 'string') {
    try {
      o = JSON.parse(v);
    } catch {
      problems.push({ path, rule: 'serviceAccount', message: 'must be the key file’s JSON (a mapping or its text)' });
      return undefined;
    }
  }
  const sa = o as Record<string, unknown> | null;
  if (!sa || typeof sa !== 'object' || typeof sa.client_email !== 'string' || typeof sa.private_key !== 'string') {
    problems.push({ path, rule: 'serviceAccount', message: 'needs client_email and private_key (a service account key file)' });
    return undefined;
  }
  if (sa.token_uri !== undefined && (typeof sa.token_uri !== 'string' || !/^https?:\/\//.test(sa.token_uri))) {
    problems.push({ path: `${path}.token_uri`, rule: 'pattern', message: 'must be an http(s) URL' });
    return undefined;
  }
  const str = (k: string) => (typeof sa[k] === 'string' ? (sa[k] as string) : undefined);
  return {
    client_email: sa.client_email,
    private_key: sa.private_key,
    private_key_id: str('private_key_id'),
    project_id: str('project_id'),
    token_uri: str('token_uri'),
  };
}

/** The credential of one key input for the provider's kind, or undefined (with a problem) when it does not fit. */
function credentialOf(kind: CredentialKind, k: KeyInput, path: string, problems: ConfigProblem[]): Pick<ProviderKey, 'apiKey' | 'aws' | 'serviceAccount'> | undefined {
  const given = (['apiKey', 'accessKeyId', 'secretAccessKey', 'sessionToken', 'serviceAccount'] as const).filter((f) => k[f] !== undefined);
  const allowed =
    kind === 'apiKey' ? ['apiKey'] : kind === 'aws' ? ['accessKeyId', 'secretAccessKey', 'sessionToken'] : ['serviceAccount'];
  for (const f of given) {
    if (!allowed.includes(f)) problems.push({ path: `${path}.${f}`, rule: 'credential', message: `this provider takes ${allowed.join(', ')}` });
  }
  if (given.some((f) => !allowed.includes(f))) return undefined;
  if (kind === 'apiKey') {
    if (!k.apiKey) return void problems.push({ path: `${path}.apiKey`, rule: 'required', message: 'a key needs its apiKey' });
    return { apiKey: k.apiKey };
  }
  if (kind === 'aws') {
    if (!k.accessKeyId || !k.secretAccessKey) {
      return void problems.push({ path, rule: 'required', message: 'a key needs accessKeyId and secretAccessKey' });
    }
    return { aws: { accessKeyId: k.accessKeyId, secretAccessKey: k.secretAccessKey, sessionToken: k.sessionToken } };
  }
  if (k.serviceAccount === undefined) return void problems.push({ path: `${path}.serviceAccount`, rule: 'required', message: 'a key needs its serviceAccount' });
  const sa = serviceAccountOf(k.serviceAccount, `${path}.serviceAccount`, problems);
  return sa ? { serviceAccount: sa } : undefined;
}

/**
 * The default key's input from the environment: AGW_PROVIDER_<ID>_KEY is the API key; for
 * bedrock `ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN]`, for vertex the key file's JSON.
 */
function envInput(kind: CredentialKind, value: string): KeyInput {
  if (kind === 'apiKey') return { apiKey: value };
  if (kind === 'serviceAccount') return { serviceAccount: value };
  const [accessKeyId, secretAccessKey, sessionToken] = value.split(':');
  return { accessKeyId, secretAccessKey, sessionToken: sessionToken || undefined };
}

/**
 * A provider's keys in order: the default key (env, else the top-level credentials) first,
 * then `keys` by position. Problems: a credential that does not fit the provider, a name
 * used twice.
 */
export function resolveKeys(def: ProviderDef, top: KeyInput, list: KeyInput[] | undefined, env: string | undefined, problems: ConfigProblem[]): ProviderKey[] {
  const kind = credentialKind(def);
  const path = `providers.${def.id}`;
  const out: ProviderKey[] = [];
  const make = (k: KeyInput, name: string, at: string) => {
    const cred = credentialOf(kind, k, at, problems);
    if (!cred) return;
    const rpm = k.rpm ?? null;
    const tpm = k.tpm ?? null;
    out.push({ name, weight: k.weight ?? 1, rpm, tpm, ...cred, health: newHealth(rpm, tpm) });
  };
  const topGiven = env ? envInput(kind, env) : top;
  const hasTop = topGiven.apiKey || topGiven.accessKeyId || topGiven.secretAccessKey || topGiven.serviceAccount !== undefined;
  if (hasTop) make({ ...topGiven, name: undefined }, 'default', env ? `env.AGW_PROVIDER_${def.id.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_KEY` : path);
  (list ?? []).forEach((k, i) => make(k, k.name ?? `key-${i + 1}`, `${path}.keys.${i}`));
  const seen = new Set<string>();
  for (const k of out) {
    if (seen.has(k.name)) problems.push({ path: `${path}.keys`, rule: 'unique', message: `two keys are named ${k.name}` });
    seen.add(k.name);
  }
  return out;
}

/** Every secret a key holds (what the redactors replace): API keys, AWS keys and session tokens, a service account's private key. */
export function keySecrets(k: ProviderKey): string[] {
  const out: string[] = [];
  if (k.apiKey) out.push(k.apiKey);
  if (k.aws) out.push(k.aws.accessKeyId, k.aws.secretAccessKey, ...(k.aws.sessionToken ? [k.aws.sessionToken] : []));
  if (k.serviceAccount) {
    out.push(k.serviceAccount.private_key, ...(k.serviceAccount.private_key_id ? [k.serviceAccount.private_key_id] : []));
    // the PEM's base64 lines, each a secret of its own (an echo may show one line)
    for (const line of k.serviceAccount.private_key.split(/\\n|\n/)) if (line.length >= 16 && !line.startsWith('-----')) out.push(line);
  }
  return out;
}
