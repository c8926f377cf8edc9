import { describe, expect, it } from 'vitest';
import { listFixtures, load } from './load.js';
import { readFixture } from './read.js';

/**
 * The corpus checks itself: every fixture loads, cites an https page, and an answer's
 * hand-written `meaning` is what its wire form says when read in its provider's format
 * (streamed arguments join into the same JSON, usage adds up as written).
 */
const all = listFixtures();

describe('conformance corpus', () => {
  it('has fixtures for every LLM provider of the catalog', async () => {
    const { PROVIDERS } = await import('../../src/shared/providers/index.js');
    const llm = Object.values(PROVIDERS)
      .filter((p) => p.category === 'LLM')
      .map((p) => p.id);
    for (const id of llm) expect(all.some((f) => f.startsWith(`${id}/`)), id).toBe(true);
  });

  it.each(all)('%s loads, cites its source and means what it says', (path) => {
    const f = load(path);
    expect(f.source).toMatch(/^https:\/\/[a-z0-9.-]+\.[a-z]+\//);
    expect(f.proves.length).toBeGreaterThan(20);
    if (f.kind === 'sse') expect(f.payloads.length).toBeGreaterThan(1);
    if (!f.meaning) {
      expect(path).toMatch(/\/request-/); // only requests carry no meaning
      return;
    }
    expect(readFixture(f)).toEqual(f.meaning);
  });
});
