import { describe, expect, it } from 'vitest';
import { NANO_PER_USD, nanoToUsd, tokenCostNano, usdToNano } from '../../src/shared/money.js';

/** Money is integer nano-USD: exact sums, per-token prices that do not round to zero. */
describe('money', () => {
  it('converts USD to integer nano-USD and back', () => {
    expect(NANO_PER_USD).toBe(1e9);
    expect(usdToNano(1)).toBe(1_000_000_000);
    expect(usdToNano(0.1) + usdToNano(0.2)).toBe(usdToNano(0.3)); // 0.1 + 0.2 !== 0.3 in floats
    expect(usdToNano(10000)).toBe(10_000_000_000_000);
    expect(Number.isInteger(usdToNano(12.3456789012))).toBe(true);
    expect(nanoToUsd(usdToNano(12.5))).toBe(12.5);
    expect(nanoToUsd(-250_000_000)).toBe(-0.25);
  });

  it('prices tokens at fractions of a micro-dollar without losing them', () => {
    expect(tokenCostNano(1_000_000, 0.15)).toBe(150_000_000); // $0.15 for 1M tokens
    expect(tokenCostNano(1, 0.15)).toBe(150); // one token: 150 nano-USD, not 0
    expect(tokenCostNano(1, 0.01)).toBe(10);
    expect(tokenCostNano(0, 75)).toBe(0);
    expect(tokenCostNano(1234, 2.5)).toBe(3_085_000);
  });

  it('a thousand one-token charges sum exactly', () => {
    let total = 0;
    for (let i = 0; i < 1000; i++) total += tokenCostNano(1, 0.15);
    expect(total).toBe(tokenCostNano(1000, 0.15));
    expect(nanoToUsd(total)).toBe(0.00015);
  });
});
