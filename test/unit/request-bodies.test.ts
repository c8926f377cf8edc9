import { describe, expect, test } from 'vitest';
import { BODY_CAP, BodyTap, CallBodies } from '../../src/daemon/requests/bodies.js';
import { csvField } from '../../src/daemon/requests/export.js';
import { Redactor } from '../../src/shared/redact.js';

/** Kept bodies: a bounded prefix of any size of answer, secrets redacted even across the cap. */
const PROVIDER_KEY = 'sk-live-provider-key-0123456789abcdef';
const redact = new Redactor([PROVIDER_KEY, 'short', undefined]);

describe('Redactor', () => {
  test.each([
    ['a configured provider key', `key=${PROVIDER_KEY}&x=1`, PROVIDER_KEY],
    ['a configured key, JSON-escaped in a body', JSON.stringify({ k: PROVIDER_KEY }), PROVIDER_KEY],
    ['an agw_ key', 'use agw_abcd1234_efghijklmnopqrstuv please', 'agw_abcd1234_efghijklmnopqrstuv'],
    ['a bearer token', 'Authorization: Bearer eyJ0eXAi.abc.def-ghi', 'eyJ0eXAi.abc.def-ghi'],
    ['a JWT anywhere', 'token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl', 'eyJhbGciOiJSUzI1NiJ9'],
    ['an sk- style key never configured', 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz', 'abcdefghijklmnopqrstuvwxyz'],
    ['an api_key JSON field', '{"api_key":"plain-value-123","model":"m"}', 'plain-value-123'],
    ['a password JSON field', '{"user":"a","Password":"hunter2hunter2"}', 'hunter2hunter2'],
  ])('%s becomes [redacted]', (_what, text, secret) => {
    const out = redact.text(text);
    expect(out).not.toContain(secret);
    expect(out).toContain('[redacted]');
  });

  test('ordinary text and short configured values are left alone', () => {
    const text = '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"a short skeleton key story"}]}';
    expect(redact.text(text)).toBe(text);
  });
});

describe('BodyTap', () => {
  test('keeps at most BODY_CAP bytes of a huge stream, counts all of it, and buffers no more than the cap and a margin', () => {
    const tap = new BodyTap();
    const chunk = Buffer.alloc(16 * 1024, 'a');
    for (let i = 0; i < 1000; i++) tap.push(chunk); // 16 MB
    expect(tap.bytes).toBe(16 * 1024 * 1000);
    const text = tap.text(redact)!;
    expect(Buffer.byteLength(text)).toBe(BODY_CAP);
    expect((tap as unknown as { kept: number }).kept).toBeLessThanOrEqual(BODY_CAP + 4096);
  });

  test('a secret crossing the cap is redacted before the cut: no piece of it is kept', () => {
    const tap = new BodyTap();
    tap.push('x'.repeat(BODY_CAP - 10));
    tap.push(`${PROVIDER_KEY} and more`);
    const text = tap.text(redact)!;
    expect(text).not.toContain(PROVIDER_KEY.slice(0, 8));
    expect(text.slice(BODY_CAP - 10)).toBe('[redacted]');
  });

  test('a multi-byte character at the cap is not split into garbage', () => {
    const tap = new BodyTap();
    tap.push('é'.repeat(BODY_CAP)); // 2 bytes each
    expect(tap.text(redact)!.endsWith('é')).toBe(true);
  });

  test('a call’s request body may be an object (kept as JSON); nothing is kept of an empty answer', () => {
    const b = new CallBodies({ model: 'm', api_key: 'abcdefgh12345' }).keep(redact);
    expect(JSON.parse(b.request!)).toEqual({ model: 'm', api_key: '[redacted]' });
    expect(b.response).toBeNull();
    expect(b.responseBytes).toBe(0);
  });
});

describe('CSV fields', () => {
  test.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['=1+2', "'=1+2"],
    ['+cmd', "'+cmd"],
    ['-2', "'-2"],
    ['@SUM(A1)', "'@SUM(A1)"],
    [null, ''],
    [12.5, '12.5'],
    [false, 'false'],
  ])('%j → %s', (v, want) => expect(csvField(v)).toBe(want));
});
