import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { levelFor, priceLevels } from '../../src/shared/config/model-prices.js';
import { ConfigError, loadConfig } from '../../src/shared/config/load.js';
import { picoPerToken, picoToNano } from '../../src/shared/money.js';
import { isBatchPath, isFreePath, PROVIDERS } from '../../src/shared/providers/index.js';
import { holdsContext, quoteTokens } from '../../src/daemon/money/hold.js';
import { tokenCost } from '../../src/daemon/money/pricing.js';
import { grouped, tokenClasses } from '../../src/daemon/money/wallet-line.js';
import { SseUsageTap, usageFromJson, type TokenUsage } from '../../src/daemon/gateway/usage.js';

/**
 * Exact cost for every token class (issue #29): price levels and tiers, the integer money
 * path, the hold's dearest case, usage shapes, the wallet line's wording, config overrides.
 * Prices: https://docs.claude.com/en/docs/about-claude/pricing (claude-sonnet-4-5),
 * https://ai.google.dev/gemini-api/docs/pricing (gemini-2.5-pro), https://platform.openai.com/docs/pricing.
 */
const dir = mkdtempSync(join(tmpdir(), 'agw-classes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const withYaml = (yaml: string) => {
  const f = join(dir, `c${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(f, yaml);
  return loadConfig(f, {});
};

const config = loadConfig(undefined, {});
const p = (id: string) => config.providers.get(id)!;
const usage = (u: Partial<TokenUsage>): TokenUsage => ({ prompt: 0, completion: 0, cached: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0, ...u });

describe('the money path is integer', () => {
  it('turns prices into pico-USD per token once, exactly to 6 decimals, and rounds once', () => {
    expect(picoPerToken(0.0375)).toBe(37_500);
    expect(picoPerToken(3.75)).toBe(3_750_000);
    expect(picoPerToken(0.000001)).toBe(1);
    expect(picoToNano(1499)).toBe(1);
    expect(picoToNano(1500)).toBe(2);
    expect(picoToNano(0)).toBe(0);
  });

  it('prices 3 tokens at $0.0375/M as 112.5 nano → 113, not three roundings of 37.5', () => {
    const c = tokenCost(config, p('cohere'), 'command-r7b-12-2024', usage({ prompt: 3 }));
    expect(c.rawNano).toBe(113);
  });
});

describe('levels and tiers', () => {
  const levels = priceLevels({ inputPer1M: 3, outputPer1M: 15, cachedInputPer1M: 0.3 }, [{ aboveInputTokens: 200_000, inputPer1M: 6, outputPer1M: 22.5 }]);
  it('a class not priced falls back to the level’s own input price (the tier’s, in a tier)', () => {
    expect(levels[0]).toMatchObject({ cacheWritePer1M: 3, cacheWrite1hPer1M: 3, cachedInputPer1M: 0.3 });
    expect(levels[1]).toMatchObject({ above: 200_000, cachedInputPer1M: 6, cacheWritePer1M: 6, cacheWrite1hPer1M: 6 });
  });
  it('a prompt strictly above the threshold is priced at the tier', () => {
    expect(levelFor(levels, 200_000).above).toBe(0);
    expect(levelFor(levels, 200_001).above).toBe(200_000);
  });
});

describe('tokenCost: Σ tokens of each class × its price, × margin', () => {
  const probe = { prompt: 6100, cached: 5000, cacheWrite: 1000, completion: 50 };
  it('the probe with 5-minute writes: 6,300,000 nano raw, $0.0126 at margin 2', () => {
    const c = tokenCost(config, p('anthropic'), 'claude-sonnet-4-5', usage(probe));
    expect([c.rawNano, c.customerNano]).toEqual([6_300_000, 12_600_000]);
  });
  it('the probe with 1-hour writes: 8,550,000 nano raw, $0.0171', () => {
    const c = tokenCost(config, p('anthropic'), 'claude-sonnet-4-5', usage({ ...probe, cacheWrite1h: 1000 }));
    expect([c.rawNano, c.customerNano, c.cacheWrite1hTokens]).toEqual([8_550_000, 17_100_000, 1000]);
  });
  it('Sonnet 4.5: at 200,000 prompt tokens the base price, one more and the tier for every token', () => {
    expect(tokenCost(config, p('anthropic'), 'claude-sonnet-4-5', usage({ prompt: 200_000, completion: 1000 })).rawNano).toBe(600_000_000 + 15_000_000);
    const above = tokenCost(config, p('anthropic'), 'claude-sonnet-4-5', usage({ prompt: 250_000, completion: 1000 }));
    expect([above.rawNano, above.customerNano, above.tierAbove]).toEqual([1_522_500_000, 3_045_000_000, 200_000]);
    // cache reads and writes count towards the threshold and are priced at the tier too
    const cached = tokenCost(config, p('anthropic'), 'claude-sonnet-4-5', usage({ prompt: 250_000, cached: 200_000, cacheWrite: 40_000, cacheWrite1h: 40_000, completion: 0 }));
    expect(cached.rawNano).toBe(10_000 * 6000 + 200_000 * 600 + 40_000 * 12_000);
  });
  it('Gemini 2.5 Pro at 250k prompt tokens: $2.50/$15, cached content $0.25', () => {
    expect(tokenCost(config, p('google'), 'gemini-2.5-pro', usage({ prompt: 250_000, completion: 1000 })).customerNano).toBe(1_280_000_000);
    expect(tokenCost(config, p('google'), 'gemini-2.5-pro', usage({ prompt: 250_000, cached: 240_000, completion: 0 })).rawNano).toBe(10_000 * 2500 + 240_000 * 250);
  });
  it('reasoning is output: OpenAI o3 and Gemini thoughts are charged at the output price (unchanged)', () => {
    const o3 = tokenCost(config, p('openai'), 'o3', usage({ prompt: 1000, cached: 400, completion: 500, reasoning: 300 }));
    expect(o3.rawNano).toBe(600 * 2000 + 400 * 500 + 500 * 8000);
  });
});

describe('the hold covers the dearest case', () => {
  const body = (o: Record<string, unknown>) => [JSON.stringify(o), o] as const;
  it('the output cap is the smaller of max_tokens and the model’s own limit', () => {
    const [w, b] = body({ model: 'gpt-4o-mini', max_tokens: 128_000, messages: [] });
    expect(quoteTokens(config, p('openai'), 'gpt-4o-mini', w, b).outputCap).toBe(16_384);
    const [w2, b2] = body({ model: 'gpt-4o-mini', max_tokens: 100, messages: [] });
    expect(quoteTokens(config, p('openai'), 'gpt-4o-mini', w2, b2).outputCap).toBe(100);
  });
  it('prices the prompt bound at the dearest input-side class (Anthropic: 1-hour writes, 2x input)', () => {
    const [w, b] = body({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });
    const q = quoteTokens(config, p('anthropic'), 'claude-sonnet-4-5', w, b);
    expect(q.promptNano).toBe(Buffer.byteLength(w) * 6000 * 2);
    expect(q.nano).toBe(q.promptNano + 10 * 15_000 * 2);
  });
  it('a prompt that could reach a tier is held at the tier, output included', () => {
    const [w, b] = body({ model: 'gemini-2.5-pro', contents: [{ parts: [{ text: 'a'.repeat(300_000) }] }], generationConfig: { maxOutputTokens: 1000 } });
    const q = quoteTokens(config, p('google'), 'gemini-2.5-pro', w, b);
    expect(q.promptNano).toBe(Buffer.byteLength(w) * 2500 * 2);
    expect(q.outputNanoPerToken).toBe(15_000 * 2);
  });
  it('context held at the provider is held at the model’s context window', () => {
    expect(holdsContext({ previous_response_id: 'resp_1' })).toBe(true);
    expect(holdsContext({ conversation: 'conv_1' })).toBe(true);
    expect(holdsContext({ cachedContent: 'cachedContents/x' })).toBe(true);
    expect(holdsContext({ previous_response_id: '' })).toBe(false);
    expect(holdsContext({ input: 'hi' })).toBe(false);
    const [w, b] = body({ model: 'gpt-4.1', previous_response_id: 'resp_1', input: 'more', max_output_tokens: 1000 });
    const q = quoteTokens(config, p('openai'), 'gpt-4.1', w, b);
    expect(q.promptNano).toBe(1_047_576 * 2000 * 2);
    expect(q.tokens).toBe(Buffer.byteLength(w) + 1000); // a key's tokens per minute count the body, not the window
    const [gw, gb] = body({ cachedContent: 'cachedContents/x', contents: [], generationConfig: { maxOutputTokens: 10 } });
    // Gemini 2.5 Pro's window is above 200k: the tier's dearest input price
    expect(quoteTokens(config, p('google'), 'gemini-2.5-pro', gw, gb).promptNano).toBe(1_048_576 * 2500 * 2);
  });
});

describe('usage shapes', () => {
  it('a stream’s message_delta repeating the counts without the breakdown keeps the 1-hour writes', () => {
    const tap = new SseUsageTap('anthropic');
    const ev = (o: unknown) => `event: x\ndata: ${JSON.stringify(o)}\n\n`;
    tap.push(
      Buffer.from(
        ev({ type: 'message_start', message: { usage: { input_tokens: 100, cache_creation_input_tokens: 1000, cache_read_input_tokens: 5000, cache_creation: { ephemeral_1h_input_tokens: 1000 }, output_tokens: 1 } } }) +
          ev({ type: 'message_delta', usage: { input_tokens: 100, cache_creation_input_tokens: 1000, cache_read_input_tokens: 5000, output_tokens: 50 } }),
      ),
    );
    tap.end();
    expect(tap.usage(0)).toEqual(usage({ prompt: 6100, cached: 5000, cacheWrite: 1000, cacheWrite1h: 1000, completion: 50 }));
  });
  it('writes without the breakdown are 5-minute writes', () => {
    const u = usageFromJson('anthropic', Buffer.from(JSON.stringify({ usage: { input_tokens: 100, cache_creation_input_tokens: 1000, output_tokens: 5 } })));
    expect(u).toMatchObject({ cacheWrite: 1000, cacheWrite1h: 0 });
  });
  it('the Responses API stream: response.completed carries the usage', () => {
    const tap = new SseUsageTap('openai');
    const usageDoc = { input_tokens: 150_000, input_tokens_details: { cached_tokens: 100_000 }, output_tokens: 525, output_tokens_details: { reasoning_tokens: 200 } };
    tap.push(Buffer.from(`event: response.created\ndata: ${JSON.stringify({ type: 'response.created', response: { usage: null } })}\n\n`));
    tap.push(Buffer.from(`event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'Done.' })}\n\n`));
    expect(tap.reportedFinal).toBe(false);
    tap.push(Buffer.from(`event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { usage: usageDoc } })}\n\n`));
    expect(tap.usage(0)).toEqual(usage({ prompt: 150_000, cached: 100_000, completion: 525, reasoning: 200 }));
  });
  it('a Responses stream cut before response.completed estimates its output from the text deltas', () => {
    const tap = new SseUsageTap('openai');
    tap.push(Buffer.from(`data: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'x'.repeat(400) })}\n\n`));
    expect(tap.usage(10).completion).toBe(100);
  });
  it('DeepSeek’s prompt_cache_hit_tokens and Cohere’s compatibility API usage are read', () => {
    const j = (o: unknown) => Buffer.from(JSON.stringify(o));
    expect(usageFromJson('openai', j({ usage: { prompt_tokens: 100, completion_tokens: 5, prompt_cache_hit_tokens: 64, prompt_cache_miss_tokens: 36 } }))).toEqual(usage({ prompt: 100, cached: 64, completion: 5 }));
    expect(usageFromJson('cohere', j({ usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }))).toEqual(usage({ prompt: 12, completion: 3 }));
  });
  it('xAI’s reasoning tokens beside completion_tokens (total_tokens says so) are output; OpenAI’s inside it are not counted twice', () => {
    const j = (o: unknown) => Buffer.from(JSON.stringify(o));
    const xai = { prompt_tokens: 32, completion_tokens: 14, total_tokens: 356, completion_tokens_details: { reasoning_tokens: 310 } };
    expect(usageFromJson('openai', j({ usage: xai }))).toEqual(usage({ prompt: 32, completion: 324, reasoning: 310 }));
    const openai = { prompt_tokens: 32, completion_tokens: 324, total_tokens: 356, completion_tokens_details: { reasoning_tokens: 310 } };
    expect(usageFromJson('openai', j({ usage: openai }))).toEqual(usage({ prompt: 32, completion: 324, reasoning: 310 }));
  });
  it('Gemini: tool-use prompt tokens are input besides promptTokenCount', () => {
    const u = usageFromJson('gemini', Buffer.from(JSON.stringify({ usageMetadata: { promptTokenCount: 100, toolUsePromptTokenCount: 40, cachedContentTokenCount: 60, candidatesTokenCount: 10, thoughtsTokenCount: 5 } })));
    expect(u).toEqual(usage({ prompt: 140, cached: 60, completion: 15, reasoning: 5 }));
  });
});

describe('the wallet line names the classes', () => {
  it('as the issue asks: "1,000 cache-write tokens (1 h)"', () => {
    const c = tokenCost(config, p('anthropic'), 'claude-sonnet-4-5', usage({ prompt: 6100, cached: 5000, cacheWrite: 1000, cacheWrite1h: 1000, completion: 50 }));
    expect(tokenClasses(c)).toBe(': 100 input tokens, 5,000 cached input tokens, 1,000 cache-write tokens (1 h), 50 output tokens');
    const r = tokenCost(config, p('openai'), 'o3', usage({ prompt: 12, completion: 1500, reasoning: 1200 }));
    expect(tokenClasses(r)).toBe(': 12 input tokens, 1,500 output tokens (1,200 reasoning)');
    expect(grouped(1234567)).toBe('1,234,567');
    expect(grouped(999)).toBe('999');
  });
});

describe('free and batch paths come from the catalog', () => {
  it('token counting is free; batch creation is not metered', () => {
    expect(isFreePath(PROVIDERS.anthropic, '/v1/messages/count_tokens')).toBe(true);
    expect(isFreePath(PROVIDERS.anthropic, '/v1/messages')).toBe(false);
    expect(isFreePath(PROVIDERS.google, '/v1beta/models/gemini-2.5-pro:countTokens')).toBe(true);
    expect(isFreePath(PROVIDERS.google, '/v1beta/models/gemini-2.5-pro:generateContent')).toBe(false);
    expect(isBatchPath(PROVIDERS.openai, '/v1/batches')).toBe(true);
    expect(isBatchPath(PROVIDERS.openai, '/v1/batches/batch_1/cancel')).toBe(false);
    expect(isBatchPath(PROVIDERS.anthropic, '/v1/messages/batches')).toBe(true);
    expect(isBatchPath(PROVIDERS.google, '/v1beta/models/gemini-2.5-flash:batchGenerateContent')).toBe(true);
  });
});

describe('models: in the config', () => {
  it('adds cache-write prices, tiers and a context window; the public price follows', () => {
    const c = withYaml(`models:
  - provider: openai
    model: gpt-4.1
    cacheWritePer1M: 2.5
    contextTokens: 500000
    tiers: [{ aboveInputTokens: 128000, inputPer1M: 4, outputPer1M: 16 }]
`);
    const m = c.models.get('openai/gpt-4.1')!;
    expect(m).toMatchObject({ inputPer1M: 2, cacheWritePer1M: 2.5, contextTokens: 500_000 });
    expect(m.levels.map((l) => [l.above, l.inputPer1M, l.cacheWritePer1M, l.cachedInputPer1M])).toEqual([
      [0, 2, 2.5, 0.5],
      [128_000, 4, 4, 4],
    ]);
    expect(tokenCost(c, c.providers.get('openai')!, 'gpt-4.1', usage({ prompt: 130_000, completion: 10 })).rawNano).toBe(130_000 * 4000 + 10 * 16_000);
  });
  it('a changed input price moves the classes the catalog did not price, not those it did', () => {
    const c = withYaml('models:\n  - { provider: anthropic, model: claude-haiku-4-5, inputPer1M: 2 }\n  - { provider: openai, model: gpt-4o, inputPer1M: 3 }\n');
    expect(c.models.get('anthropic/claude-haiku-4-5')!.levels[0]).toMatchObject({ inputPer1M: 2, cacheWritePer1M: 1.25, cacheWrite1hPer1M: 2 });
    expect(c.models.get('openai/gpt-4o')!.levels[0]).toMatchObject({ inputPer1M: 3, cacheWritePer1M: 3, cacheWrite1hPer1M: 3 });
  });
  it('refuses two tiers at one threshold, and a tier without its prices', () => {
    expect(() => withYaml('models:\n  - { provider: openai, model: gpt-4o, tiers: [{ aboveInputTokens: 5, inputPer1M: 1, outputPer1M: 1 }, { aboveInputTokens: 5, inputPer1M: 2, outputPer1M: 2 }] }\n')).toThrow(ConfigError);
    expect(() => withYaml('models:\n  - { provider: openai, model: gpt-4o, tiers: [{ aboveInputTokens: 5, inputPer1M: 1 }] }\n')).toThrow(ConfigError);
  });
});
