import { describe, expect, test } from 'vitest';
import { resolveConfig } from '../../src/shared/config/resolve.js';
import { checkConfigValue } from '../../src/shared/config/load.js';
import { newHealth, type ProviderKey } from '../../src/shared/config/provider-keys.js';
import { KeysExhausted, keyFailed, keySucceeded, keyTokens, pickKey } from '../../src/daemon/gateway/keys/pick.js';
import { cooldownMs, failedConnection, keyPolicy, retryAfterMs } from '../../src/daemon/gateway/keys/policy.js';
import { conversationOf, StickyRoutes } from '../../src/daemon/gateway/keys/sticky.js';
import { SecretRedactor } from '../../src/shared/secret-redactor.js';

const key = (name: string, weight = 1, rpm: number | null = null, tpm: number | null = null): ProviderKey => ({ name, weight, rpm, tpm, apiKey: `sk-${name}-0000000000`, health: newHealth(rpm, tpm) });
const policy = keyPolicy({ keyCooldownMs: 1000, keyCooldownMaxMs: 300_000, keyRetryServerErrors: true });

describe('providers.ID.keys in the config', () => {
  const resolve = (providers: unknown, env: Record<string, string> = {}) => {
    const problems = checkConfigValue({ providers });
    if (problems.length) return { problems };
    return resolveConfig({ providers } as never, env);
  };

  test('a plain apiKey is the key named default, first; unnamed keys are key-N by position; env AGW_PROVIDER_<ID>_KEY is the default key', () => {
    const r = resolve({ openai: { apiKey: 'sk-top', keys: [{ apiKey: 'sk-1' }, { apiKey: 'sk-2', name: 'team-b', weight: 3, rpm: 60, tpm: 1000 }] } });
    const keys = r.config!.providers.get('openai')!.keys;
    expect(keys.map((k) => [k.name, k.apiKey, k.weight, k.rpm, k.tpm])).toEqual([
      ['default', 'sk-top', 1, null, null],
      ['key-1', 'sk-1', 1, null, null],
      ['team-b', 'sk-2', 3, 60, 1000],
    ]);
    const env = resolve({ openai: { apiKey: 'sk-top', keys: [{ apiKey: 'sk-1' }] } }, { AGW_PROVIDER_OPENAI_KEY: 'sk-env' });
    expect(env.config!.providers.get('openai')!.keys.map((k) => k.apiKey)).toEqual(['sk-env', 'sk-1']);
    expect(env.config!.providers.get('openai')!.apiKey).toBe('sk-env');
  });

  test('problems: a credential of another kind, a name used twice, a weight of 0, a cloud setting on another provider, Azure without its resource URL, Vertex without a project', () => {
    const problems = (providers: unknown) => resolve(providers).problems.map((p) => `${p.path}: ${p.rule}`);
    expect(problems({ openai: { keys: [{ accessKeyId: 'AKID', secretAccessKey: 's' }] } })).toEqual(['providers.openai.keys.0.accessKeyId: credential', 'providers.openai.keys.0.secretAccessKey: credential']);
    expect(problems({ openai: { apiKey: 'a', keys: [{ apiKey: 'b', name: 'default' }] } })).toEqual(['providers.openai.keys: unique']);
    expect(problems({ openai: { keys: [{ apiKey: 'b', weight: 0 }] } })).toEqual(['providers.openai.keys.0.weight: minimum']);
    expect(problems({ openai: { apiKey: 'a', region: 'us-east-1' } })).toEqual(['providers.openai.region: provider']);
    expect(problems({ 'azure-openai': { apiKey: 'a' } })).toEqual(['providers.azure-openai.baseUrl: required']);
    expect(problems({ bedrock: { accessKeyId: 'AKID' } })).toEqual(['providers.bedrock: required']);
    expect(problems({ vertex: { serviceAccount: { client_email: 'x@y', private_key: 'k' } } })).toEqual(['providers.vertex.project: required']);
    expect(problems({ vertex: { serviceAccount: 'not json' } })).toEqual(['providers.vertex.serviceAccount: serviceAccount']);
  });

  test('the clouds: default base URLs of the region and location; the project from the service account; bedrock keys from env', () => {
    const r = resolve(
      { bedrock: { region: 'eu-central-1' }, vertex: { location: 'us-east5', serviceAccount: JSON.stringify({ client_email: 'a@b', private_key: 'k', project_id: 'proj' }) } },
      { AGW_PROVIDER_BEDROCK_KEY: 'AKIDENV:secretenv:tokenenv' },
    );
    const b = r.config!.providers.get('bedrock')!;
    expect(b.baseUrl).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com');
    expect(b.keys[0].aws).toEqual({ accessKeyId: 'AKIDENV', secretAccessKey: 'secretenv', sessionToken: 'tokenenv' });
    const v = r.config!.providers.get('vertex')!;
    expect(v.baseUrl).toBe('https://us-east5-aiplatform.googleapis.com');
    expect(v.cloud).toMatchObject({ project: 'proj', location: 'us-east5' });
    expect(resolve({}).config!.providers.get('vertex')!.baseUrl).toBe('https://aiplatform.googleapis.com');
  });
});

describe('picking a key', () => {
  test('weights 3:1 give A A B A … exactly (smooth weighted round-robin)', () => {
    const keys = [key('a', 3), key('b', 1)];
    const picks = Array.from({ length: 8 }, () => pickKey('p', keys, 1000)!.name);
    expect(picks.filter((n) => n === 'a')).toHaveLength(6);
    expect(picks.join('')).toBe('aabaaaba');
  });

  test('a cooling key is skipped; the conversation’s key is preferred while ready; a retry never goes to a cooling key', () => {
    const [a, b, c] = [key('a'), key('b'), key('c')];
    keyFailed(policy, a, 1000, 5000);
    expect(a.health.coolingUntil).toBe(6000);
    for (let i = 0; i < 4; i++) expect(pickKey('p', [a, b, c], 2000)!.name).not.toBe('a');
    expect(pickKey('p', [a, b, c], 2000, c)!.name).toBe('c');
    expect(pickKey('p', [a, b, c], 2000, a)!.name).not.toBe('a');
    keyFailed(policy, b, 2000, undefined); // 1 s: the first backoff
    expect(pickKey('p', [a, b, c], 2000, undefined, c)).toBeUndefined();
    // every key cooling: the one whose cooldown ends first is tried (the upstream decides)
    keyFailed(policy, c, 1000, 60_000);
    expect(pickKey('p', [a, b, c], 2000)!.name).toBe('b');
    keySucceeded(b);
    expect(b.health.coolingUntil).toBe(0);
  });

  test('rpm and tpm are token buckets per key; all at their limit: KeysExhausted with the wait', () => {
    const a = key('a', 1, 2);
    const b = key('b', 1, null, 100);
    const keys = [a, b];
    expect([pickKey('p', keys, 1000)!.name, pickKey('p', keys, 1000)!.name, pickKey('p', keys, 1000)!.name].sort()).toEqual(['a', 'a', 'b']);
    keyTokens(b, 150);
    let err: unknown;
    try {
      pickKey('p', keys, 1000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(KeysExhausted);
    expect((err as KeysExhausted).status).toBe(429);
    expect((err as KeysExhausted).retryAfterMs).toBe(30_000); // a's next request, 60 s / 2
    // 30 s later a has one request again
    expect(pickKey('p', keys, 31_000)!.name).toBe('a');
  });
});

describe('the cooldown policy', () => {
  test('Retry-After as seconds, as an HTTP date, retry-after-ms; else exponential backoff; capped', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': '7' }, now)).toBe(7000);
    expect(retryAfterMs({ 'retry-after': 'Wed, 01 Jan 2025 00:00:20 GMT' }, now)).toBe(20_000);
    expect(retryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect([1, 2, 3, 4].map((n) => cooldownMs(policy, n, undefined))).toEqual([1000, 2000, 4000, 8000]);
    expect(cooldownMs(policy, 40, undefined)).toBe(300_000);
    expect(cooldownMs(policy, 1, 10_000_000)).toBe(300_000);
  });

  test('no connection is a key failure; an abort or a timeout after connecting is not', () => {
    expect(failedConnection(policy, { cause: { code: 'ECONNREFUSED' } })).toBe(true);
    expect(failedConnection(policy, { cause: { code: 'UND_ERR_SOCKET' } })).toBe(true);
    expect(failedConnection(policy, { cause: { code: 'UND_ERR_HEADERS_TIMEOUT' } })).toBe(false);
    expect(failedConnection(policy, { cause: { code: 'UND_ERR_ABORTED' } })).toBe(false);
  });
});

describe('conversations', () => {
  test('prompt_cache_key, then user (or metadata.user_id), then the leading messages; per account', () => {
    const base = { messages: [{ role: 'system', content: 's' }, { role: 'user', content: 'q' }] };
    const later = { messages: [...base.messages, { role: 'assistant', content: 'a' }, { role: 'user', content: 'q2' }] };
    expect(conversationOf('u1', base)).toBe(conversationOf('u1', later));
    expect(conversationOf('u1', base)).not.toBe(conversationOf('u2', base));
    expect(conversationOf('u1', { ...base, user: 'x' })).toBe(conversationOf('u1', { messages: [{ role: 'user', content: 'other' }], user: 'x' }));
    expect(conversationOf('u1', { ...base, user: 'x', prompt_cache_key: 'k' })).toBe(conversationOf('u1', { prompt_cache_key: 'k', messages: [] }));
    expect(conversationOf('u1', { metadata: { user_id: 'x' }, messages: [] })).toBe(conversationOf('u1', { user: 'x', messages: [] }));
    expect(conversationOf('u1', {})).toBeUndefined();
    // Gemini's contents and systemInstruction
    expect(conversationOf('u1', { systemInstruction: { parts: [{ text: 's' }] }, contents: [{ role: 'user', parts: [{ text: 'q' }] }] })).toMatch(/^u1:m:/);
  });

  test('pins are forgotten after their TTL and least recently used first beyond the bound', () => {
    const s = new StickyRoutes(1000, 2);
    s.remember('c1', 'openai', 'm', 'a', 0);
    s.remember('c2', 'openai', 'm', 'b', 0);
    expect(s.get('c1', 500)?.key).toBe('a'); // c1 used: c2 is now the oldest
    s.remember('c3', 'openai', 'm', 'a', 600);
    expect(s.get('c2', 700)).toBeUndefined();
    expect(s.get('c1', 1400)?.key).toBe('a'); // 900 ms after its last use
    expect(s.get('c3', 1700)).toBeUndefined(); // 1100 ms after
    expect(s.size).toBe(1);
  });
});

describe('derived credentials are redacted too', () => {
  test('an access token set for a slot replaces the previous one; a call’s signature only in that call', () => {
    const r = new SecretRedactor(['sk-configured-key-123456']);
    r.setDerived('vertex:default', 'ya29.first-token-abcdefgh');
    expect(r.text('t=ya29.first-token-abcdefgh k=sk-configured-key-123456')).toBe('t=[redacted] k=[redacted]');
    r.setDerived('vertex:default', 'ya29.second-token-ijklmnop');
    expect(r.text('ya29.second-token-ijklmnop')).toBe('[redacted]');
    const sig = 'a'.repeat(20) + 'b'.repeat(44);
    const call = r.with([sig]);
    expect(call.text(`Signature=${sig}`)).toBe('Signature=[redacted]');
    expect(call.headerValue(`x ${sig} sk-configured-key-123456`)).toBe('x [redacted] [redacted]');
    expect(r.text(`Signature=${sig}`)).toBe(`Signature=${sig}`);
  });
});
