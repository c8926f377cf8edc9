import { expect, test } from 'vitest';
import { didYouMean, didYouMeanText, editDistance } from '../../src/shared/did-you-mean.js';

test('the issue\'s typos find what was meant', () => {
  expect(didYouMean('gpt-4o-mni', ['gpt-4o', 'gpt-4o-mini', 'gpt-4.1-mini', 'o3'])).toEqual(['gpt-4o-mini']);
  expect(didYouMean('smart-standrd', ['smart-standard', 'smart-pro', 'smart-lite'])).toEqual(['smart-standard']);
  expect(didYouMean('weather-reprot', ['weather-report', 'whether-or-not', 'weather'])).toEqual(['weather-report']);
  expect(didYouMean('best-chaep-llm', ['best-cheap-llm', 'best-fast-llm', 'best-quality-llm'])).toEqual(['best-cheap-llm']);
});

test('nothing close, nothing suggested; case is forgiven; closest first', () => {
  expect(didYouMean('llama', ['gpt-4o-mini', 'claude-haiku-4-5'])).toEqual([]);
  expect(didYouMean('GPT-4o-mini', ['gpt-4o-mini'])).toEqual(['gpt-4o-mini']);
  expect(didYouMean('gpt-4o-min', ['gpt-4o-mini', 'gpt-4.1-mini'])).toEqual(['gpt-4o-mini']);
  expect(didYouMean('x'.repeat(101), ['x'.repeat(101)])).toEqual([]);
  expect(editDistance('ab', 'ba')).toBe(1);
  expect(editDistance('kitten', 'sitting')).toBe(3);
});

test('the sentence', () => {
  expect(didYouMeanText([])).toBe('');
  expect(didYouMeanText(['a'])).toBe(' Did you mean "a"?');
  expect(didYouMeanText(['a', 'b', 'c'])).toBe(' Did you mean "a", "b" or "c"?');
});
