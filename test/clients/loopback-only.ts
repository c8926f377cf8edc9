import { afterAll, expect } from 'vitest';

/**
 * Setup for `npm run test:clients`: the clients must run offline. A fetch to anything but
 * loopback fails at once (rather than after a client's retries and DNS time-outs) and fails
 * the file, naming the URL: a client that phones home is a finding, not noise.
 */
const outside: string[] = [];
const realFetch = globalThis.fetch;
globalThis.fetch = ((input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) {
    outside.push(url.href);
    return Promise.reject(new TypeError(`test:clients runs offline: refused ${url.href}`));
  }
  return realFetch(input, init);
}) as typeof fetch;

afterAll(() => {
  expect(outside, 'requests that tried to leave loopback').toEqual([]);
});
