import { describe, expect, it } from 'vitest';
import { MIN_PIECE, REDACTED, SecretRedactor, secretForms } from '../../src/shared/secret-redactor.js';

/** The redactor behind "secrets never reach a caller": which forms and pieces of a key it finds. */
const KEY = 'sk-proj-7f3a9c2e5b1d4f60a8e2c4d6';
const r = new SecretRedactor([KEY, 'AIzaSyQUERYkey-0123456789', '', 'tiny']);

describe('SecretRedactor', () => {
  it('replaces the key wherever it appears, as often as it appears', () => {
    expect(r.text(`Incorrect API key provided: Bearer ${KEY}. Again: ${KEY}!`)).toBe(`Incorrect API key provided: Bearer ${REDACTED}. Again: ${REDACTED}!`);
  });

  it('replaces partial echoes of 8 characters or more, and leaves shorter ones', () => {
    const masked = `${KEY.slice(0, 8)}****************${KEY.slice(-4)}`;
    expect(r.text(masked)).toBe(`${REDACTED}****************${KEY.slice(-4)}`);
    expect(r.text(`…${KEY.slice(5, 17)}…`)).toBe(`…${REDACTED}…`);
    expect(r.text(`x${KEY.slice(3, 3 + MIN_PIECE - 1)}x`)).toBe(`x${KEY.slice(3, 3 + MIN_PIECE - 1)}x`);
  });

  it('finds the key base64-encoded at any alignment (a Basic auth echo), standard and URL alphabets', () => {
    for (const prefix of ['', 'u:', 'user:', 'ab']) {
      for (const enc of ['base64', 'base64url'] as const) {
        const b64 = Buffer.from(`${prefix}${KEY}`).toString(enc);
        const out = r.text(`WWW-Authenticate: Basic ${b64}`);
        expect(out, `${prefix} ${enc}`).toContain(REDACTED);
        // what is left of the encoding cannot be decoded back to 8 characters of the key
        const left = out.replace('WWW-Authenticate: Basic ', '').split(REDACTED).join('');
        expect(Buffer.from(left, enc).toString('latin1')).not.toContain(KEY.slice(0, MIN_PIECE));
      }
    }
  });

  it('finds a query-parameter key URL-encoded and a key JSON-escaped', () => {
    const odd = new SecretRedactor(['k/ey+with=odd"chars&1234']);
    expect(odd.text(`GET /v1/x?key=${encodeURIComponent('k/ey+with=odd"chars&1234')}`)).toBe(`GET /v1/x?key=${REDACTED}`);
    expect(odd.text(JSON.stringify({ m: 'k/ey+with=odd"chars&1234' }))).toBe(`{"m":"${REDACTED}"}`);
  });

  it('matches a key shorter than 8 characters only whole', () => {
    expect(r.text('a tiny key: tiny')).toBe(`a ${REDACTED} key: ${REDACTED}`);
  });

  it('leaves text without secrets and binary bodies byte for byte', () => {
    expect(r.text('nothing to see here, sk-other-key-0000')).toBe('nothing to see here, sk-other-key-0000');
    const bin = Buffer.from([0, 255, 128, 10, 200, ...Buffer.from(KEY), 7, 255]);
    const out = r.buffer(bin);
    expect([...out.subarray(0, 5)]).toEqual([0, 255, 128, 10, 200]);
    expect(out.subarray(5, 5 + REDACTED.length).toString()).toBe(REDACTED);
    expect([...out.subarray(-2)]).toEqual([7, 255]);
    const clean = Buffer.from([1, 2, 3, 250]);
    expect(r.buffer(clean)).toBe(clean);
  });

  it('headers: values redacted, names carrying a secret flagged', () => {
    expect(r.headerValue(`Bearer realm="api", key="${KEY}"`)).toBe(`Bearer realm="api", key="${REDACTED}"`);
    expect(r.headerValue(['a', KEY])).toEqual(['a', REDACTED]);
    expect(r.taints(`x-${KEY}`)).toBe(true);
    expect(r.taints('content-type')).toBe(false);
  });

  it('is a no-op without configured keys', () => {
    const none = new SecretRedactor([]);
    expect(none.empty).toBe(true);
    expect(none.text(KEY)).toBe(KEY);
  });

  it('the forms of a key: itself, URL-encoded, JSON-escaped and base64 cores', () => {
    const forms = secretForms(KEY);
    expect(forms).toContain(KEY);
    expect(forms).toContain(Buffer.from(KEY).toString('base64').slice(0, Math.floor((KEY.length * 8) / 6)));
  });
});

describe('derived secrets (a service account’s access token)', () => {
  const T1 = 'ya29.c.first-token-0123456789abcdefghij';
  const T2 = 'ya29.c.second-token-9876543210zyxwvuts';
  const T3 = 'ya29.c.third-token-ABCDEFGHIJKLMNOPQRS';

  it('a refreshed token replaces the old one in its slot, but the old one stays redacted while it may still be valid', () => {
    const d = new SecretRedactor([KEY]);
    d.setDerived('vertex:default', T1);
    expect(d.text(`Bearer ${T1}`)).toBe(`Bearer ${REDACTED}`);
    // refreshed a minute before T1 expires: a call sent with T1 may still be answering
    d.setDerived('vertex:default', T2, Date.now() + 60_000);
    expect(d.text(`Bearer ${T2}`)).toBe(`Bearer ${REDACTED}`);
    expect(d.text(`echo ${T1}`)).toBe(`echo ${REDACTED}`);
    expect(d.text(KEY)).toBe(REDACTED);
  });

  it('a previous token whose time is over is dropped at the next refresh; one previous token per slot', () => {
    const d = new SecretRedactor([KEY]);
    d.setDerived('vertex:a', T1);
    d.setDerived('vertex:a', T2, Date.now() - 1); // T1 had expired already
    expect(d.text(T1)).toBe(T1);
    d.setDerived('vertex:a', T3, Date.now() + 60_000);
    expect(d.text(`${T2} ${T3}`)).toBe(`${REDACTED} ${REDACTED}`);
    expect(d.text(T1)).toBe(T1);
  });
});
