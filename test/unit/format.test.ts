import { describe, expect, it } from 'vitest';
import { formatDay, formatUsd, formatWhen } from '../../src/shared/format.js';

/** Issue 14 point 14: one money and one date format for the CLI and the portal. */
describe('formatUsd: 2 decimals from $1, 4 significant digits below', () => {
  it.each([
    [0, '$0.00'],
    [1, '$1.00'],
    [12.5, '$12.50'],
    [1234.5, '$1,234.50'],
    [1234567.891, '$1,234,567.89'],
    [0.5, '$0.50'],
    [0.016, '$0.016'],
    [0.002668, '$0.002668'],
    [0.12345, '$0.1235'],
    [0.99999, '$1.00'],
    [0.000123456, '$0.000123'],
    [0.0000004, '<$0.000001'],
    [-1.1, '-$1.10'],
    [-0.016, '-$0.016'],
  ])('%s → %s', (n, want) => expect(formatUsd(n)).toBe(want));

  it('the issue’s pair no longer mixes precisions', () => {
    // was "$0.0160" beside "$0.002668" in the portal; both now 4 significant digits at most
    expect([formatUsd(0.016), formatUsd(0.002668)]).toEqual(['$0.016', '$0.002668']);
  });

  it('nothing for what is not a number', () => {
    expect(formatUsd(undefined)).toBe('');
    expect(formatUsd(Number.NaN)).toBe('');
  });

  it('is self-contained, so the portal can embed its source', () => {
    // eslint-disable-next-line no-new-func
    const embedded = new Function(`${String(formatUsd)}; return formatUsd;`)() as typeof formatUsd;
    expect(embedded(1234.5)).toBe('$1,234.50');
    expect(embedded(0.002668)).toBe('$0.002668');
  });
});

describe('dates: one format, UTC', () => {
  it('a moment to the minute, a day as YYYY-MM-DD', () => {
    expect(formatWhen('2026-01-31T23:59:42.123Z')).toBe('2026-01-31 23:59 UTC');
    expect(formatWhen(Date.UTC(2026, 1, 1))).toBe('2026-02-01 00:00 UTC');
    expect(formatDay('2026-02-01T00:00:00.000Z')).toBe('2026-02-01');
    expect(formatWhen(null)).toBe('');
    expect(formatDay(undefined)).toBe('');
  });
});
