import { describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../../src/shared/config/resolve.js';
import { keyMetricLines } from '../../src/daemon/gateway/keys/stats.js';

/**
 * Review (Low): the provider keys' lines of /api/metrics escape their label values as the
 * Prometheus text format asks (backslash, double quote and newline), as the registry's own
 * lines do, so no key name can break a line or forge another series.
 */
const config = (name: string) =>
  ({
    providers: new Map([['openai', { def: { id: 'openai' }, keys: [{ name, health: { calls: 2, failures: 1, coolingUntil: 0, streak: 0 } }] }]]),
  }) as unknown as ResolvedConfig;

describe('agw_upstream_key_* labels', () => {
  it('escape a backslash, a double quote and a newline', () => {
    const lines = keyMetricLines(config('a\nb"c\\d'), Date.now());
    const calls = lines.find((l) => l.startsWith('agw_upstream_key_calls_total{'));
    expect(calls).toBe('agw_upstream_key_calls_total{provider="openai",key="a\\nb\\"c\\\\d"} 2');
    for (const l of lines) expect(l.startsWith('#') || /^agw_upstream_key_\w+\{provider="openai",key="[^\n]*"\} [\d.]+$/.test(l)).toBe(true);
  });
});
