import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/shared/config/resolve.js';
import { dearestRow, priceRow, tokenCost } from '../../src/daemon/money/pricing.js';
import { cloudModelRow } from '../../src/shared/config/cloud.js';
import { getProvider } from '../../src/shared/providers/index.js';

/**
 * A model id is priced as a catalog row it merely starts with only when it is a dated
 * snapshot of it (review M1): o3-pro is not o3, gemini-2.5-flash-image not gemini-2.5-flash.
 * Anything else is a model the catalog does not know: the provider's dearest rate.
 */
const { config } = resolveConfig({}, {});

describe('prefix matching: dated snapshots only', () => {
  it('snapshots price as their model: -YYYY-MM-DD, -YYYYMMDD, @date, -vN:N, -NNN', () => {
    expect(priceRow(config, 'openai', 'gpt-4o-mini-2024-07-18')?.model).toBe('gpt-4o-mini');
    expect(priceRow(config, 'openai', 'o3-2025-04-16')?.model).toBe('o3');
    expect(priceRow(config, 'anthropic', 'claude-sonnet-4-5-20250929')?.model).toBe('claude-sonnet-4-5');
    expect(priceRow(config, 'google', 'gemini-2.5-flash-001')?.model).toBe('gemini-2.5-flash');
    expect(priceRow(config, 'vertex', 'claude-sonnet-4-5@20250929')?.model).toBe('claude-sonnet-4-5');
  });

  it('other products of a family are not their base model', () => {
    for (const [provider, model] of [
      ['openai', 'o3-pro'],
      ['openai', 'o3-deep-research'],
      ['openai', 'gpt-4o-audio-preview'],
      ['openai', 'gpt-4o-mini-tts'],
      ['openai', 'gpt-4o-mini-realtime-preview-2024-12-17'],
      ['google', 'gemini-2.5-flash-image'],
      ['google', 'gemini-2.5-flash-preview-tts'],
    ]) {
      expect(priceRow(config, provider, model), `${provider}/${model}`).toBeUndefined();
    }
    // and so are charged at the provider's dearest rate
    const usage = { prompt: 1000, completion: 1000, cached: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0 };
    const google = config.providers.get('google')!;
    expect(tokenCost(config, google, 'gemini-2.5-flash-image', usage).rawNano).toBe(tokenCost(config, google, dearestRow(config, 'google')!.model, usage).rawNano);
    expect(tokenCost(config, google, 'gemini-2.5-flash-image', usage).rawNano).toBeGreaterThan(tokenCost(config, google, 'gemini-2.5-flash', usage).rawNano);
  });

  it('a cloud’s own id: a snapshot or an inference profile of a row, not another product', () => {
    const rows = [...config.models.values()];
    expect(cloudModelRow(getProvider('vertex')!, 'gemini-2.5-flash-image', rows)).toBeUndefined();
    expect(cloudModelRow(getProvider('vertex')!, 'claude-sonnet-4-5@20250929', rows)?.model).toBe('claude-sonnet-4-5');
    expect(cloudModelRow(getProvider('azure-openai')!, 'gpt-4o-2024-11-20', rows)?.model).toBe('gpt-4o');
    expect(cloudModelRow(getProvider('azure-openai')!, 'gpt-4o-audio-preview', rows)).toBeUndefined();
    expect(cloudModelRow(getProvider('bedrock')!, 'us.anthropic.claude-sonnet-4-5-20250929-v1:0', rows)?.model).toBe('anthropic.claude-sonnet-4-5-20250929-v1:0');
  });
});
