import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/shared/config/resolve.js';
import { asciiView, holdsContext, promptBound, quoteTokens } from '../../src/daemon/money/hold.js';
import { tokenCost } from '../../src/daemon/money/pricing.js';
import { countImages, imageTokens, promptBoundWithImages } from '../../src/daemon/gateway/image-tokens.js';

/**
 * The hold's prompt bound (review H5): images counted as each cloud counts them, content the
 * provider holds or expands held at the model's context window, and a bound with images that
 * never goes below what the body's bytes say.
 */
const { config } = resolveConfig({}, {});
const p = (id: string) => config.providers.get(id)!;
// a 40 kB PNG (only its header is read: 1024 × 1024)
const png = (() => {
  const b = Buffer.alloc(40_000);
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(b);
  b.writeUInt32BE(1024, 16);
  b.writeUInt32BE(1024, 20);
  return b.toString('base64');
})();

describe('images on the clouds count as their models’ makers count them', () => {
  it('azure-openai as OpenAI, Bedrock’s and Vertex’s Claude as Anthropic, Vertex’s Gemini as Gemini', () => {
    expect(imageTokens({}, 'azure-openai', 'gpt-4o-mini')).toBe(imageTokens({}, 'openai', 'gpt-4o-mini'));
    expect(imageTokens({}, 'azure-openai', 'gpt-4o-mini')).toBe(2833 + 5667 * 8);
    expect(imageTokens({}, 'bedrock', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0')).toBe(1600);
    expect(imageTokens({}, 'vertex', 'claude-sonnet-4-5@20250929')).toBe(1600);
    expect(imageTokens({}, 'vertex', 'gemini-2.5-flash')).toBe(258 * 16);
  });

  it('a Converse image is an image: its prompt bound is never below the body minus the image plus its tokens', () => {
    const body = { messages: [{ role: 'user', content: [{ image: { format: 'png', source: { bytes: png } } }, { text: 'What is it?' }] }] };
    const text = JSON.stringify(body);
    const images = countImages('converse', body, text, 'bedrock', 'amazon.nova-pro-v1:0');
    expect(images?.count).toBe(1);
    const bound = promptBoundWithImages(text, images!);
    expect(bound).toBeGreaterThanOrEqual(Buffer.byteLength(text) - png.length + 8192);
  });

  it('the same image counted from a messages body while a Converse body is sent (unified chat to Nova)', () => {
    const messages = { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'What is it?' }] }] };
    const converse = JSON.stringify({ messages: [{ role: 'user', content: [{ image: { format: 'png', source: { bytes: png } } }, { text: 'What is it?' }] }] });
    const images = countImages('messages', messages, JSON.stringify(messages), 'bedrock', 'amazon.nova-pro-v1:0')!;
    expect(promptBoundWithImages(converse, images)).toBeGreaterThanOrEqual(Buffer.byteLength(converse) - png.length + 8192);
  });

  it('an image-free body keeps its byte bound', () => {
    expect(promptBound('{"messages":[{"role":"user","content":"hi"}]}')).toBe(45);
  });
});

describe('content held or expanded at the provider: the prompt is held at the context window', () => {
  const held = (provider: string, model: string, body: Record<string, unknown>) => quoteTokens(config, p(provider), model, JSON.stringify(body), body).promptNano;
  /** The window at the model's dearest input-side price of any level, × margin 2. */
  const windowNano = (provider: string, model: string) => {
    const row = config.models.get(`${provider}/${model}`)!;
    return ((row.contextTokens * Math.max(...row.levels.map((l) => l.dearestInputPico))) / 1000) * 2;
  };

  it('snake-case cached_content and a Responses prompt template hold context', () => {
    expect(holdsContext({ cached_content: 'cachedContents/x' })).toBe(true);
    expect(holdsContext({ prompt: { id: 'pmpt_1' } })).toBe(true);
    expect(holdsContext({ prompt: 'hello' })).toBe(false);
  });

  it('Gemini 2.5 Pro with a video by URI: its window at the price above 200k', () => {
    const body = { contents: [{ role: 'user', parts: [{ file_data: { mime_type: 'video/mp4', file_uri: 'gs://b/v.mp4' } }] }], generationConfig: { maxOutputTokens: 10 } };
    expect(held('google', 'gemini-2.5-pro', body)).toBe(windowNano('google', 'gemini-2.5-pro'));
  });

  it('an image by URI is sized (the most one image counts), not the window', () => {
    const body = { contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'image/png', fileUri: 'gs://b/i.png' } }] }], generationConfig: { maxOutputTokens: 10 } };
    expect(held('google', 'gemini-2.5-pro', body)).toBeLessThan(windowNano('google', 'gemini-2.5-pro'));
  });

  it('server tools: OpenAI web search options, Gemini url context, Anthropic MCP servers; function tools do not', () => {
    const gpt = (o: Record<string, unknown>) => held('openai', 'gpt-4.1', { model: 'gpt-4.1', max_tokens: 1, messages: [{ role: 'user', content: 'x' }], ...o });
    const win = windowNano('openai', 'gpt-4.1');
    expect(gpt({ tools: [{ type: 'mcp', server_url: 'https://x' }] })).toBe(win);
    expect(gpt({ tools: [{ type: 'function', function: { name: 'f', parameters: {} } }] })).toBeLessThan(win);
    expect(held('google', 'gemini-2.5-flash', { tools: [{ urlContext: {} }], contents: [] })).toBe(windowNano('google', 'gemini-2.5-flash'));
    expect(held('google', 'gemini-2.5-flash', { tools: [{ functionDeclarations: [] }], contents: [] })).toBeLessThan(windowNano('google', 'gemini-2.5-flash'));
    const claude = held('anthropic', 'claude-haiku-4-5', { model: 'claude-haiku-4-5', max_tokens: 1, mcp_servers: [{ type: 'url', url: 'https://x', name: 'x' }], messages: [] });
    expect(claude).toBe(windowNano('anthropic', 'claude-haiku-4-5'));
  });
});

describe('the hold is the charge’s own arithmetic at the bound (review Low)', () => {
  const tiny = resolveConfig({ models: [{ provider: 'openai', model: 'tiny', band: 'lite', inputPer1M: 0.0004, outputPer1M: 0.0002 }] }, {}).config;
  const usage = (prompt: number, completion: number) => ({ prompt, completion, cached: 0, cacheWrite: 0, cacheWrite1h: 0, reasoning: 0 });

  it('prompt 0.4 nano + output 0.2 nano at margin 2: held 2, charged 2, nothing written off', () => {
    const q = quoteTokens(tiny, tiny.providers.get('openai')!, 'tiny', undefined, { max_tokens: 1 }, true, 1);
    const c = tokenCost(tiny, tiny.providers.get('openai')!, 'tiny', usage(1, 1));
    expect(c.customerNano).toBe(2);
    expect(q.nano).toBeGreaterThanOrEqual(c.customerNano);
  });

  it('over a sweep of prices, margins and counts, a call at its bound never costs more than its hold', () => {
    for (const margin of [1, 1.3, 2, 2.5]) {
      for (const [input, output] of [[0.0004, 0.0002], [0.15, 0.6], [0.0013, 0.0007], [3, 15], [0.0009, 0.0031]]) {
        const cfg = resolveConfig({ margin, models: [{ provider: 'openai', model: 'tiny', band: 'lite', inputPer1M: input, outputPer1M: output }] }, {}).config;
        const provider = cfg.providers.get('openai')!;
        for (const prompt of [1, 2, 3, 7, 13, 333]) {
          for (const cap of [1, 2, 5, 9, 101]) {
            const q = quoteTokens(cfg, provider, 'tiny', undefined, { max_tokens: cap }, true, prompt);
            const charged = tokenCost(cfg, provider, 'tiny', usage(prompt, cap)).customerNano;
            expect(q.nano, `margin ${margin}, $${input}/$${output}, ${prompt} in, ${cap} out`).toBeGreaterThanOrEqual(charged);
          }
        }
      }
    }
  });
});

describe('ASCII words found in a body’s bytes (asciiView) exactly where Buffer.includes finds them', () => {
  const words = ['image', 'file_id', 'inlineData', 'document', 'video'];
  const bodies = [
    JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'häßlich 日本語 😀 image' }] }),
    JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'ümlaut '.repeat(20_000) + 'document' }] }), // > 64 kB
    JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'no media here: 画像 ファイル' }] }),
  ];
  it('for UTF-8 bodies small and large, the same view when asked twice', () => {
    for (const text of bodies) {
      const b = Buffer.from(text, 'utf8');
      for (const w of words) expect(asciiView(b).includes(w), w).toBe(b.includes(w));
      expect(asciiView(b)).toBe(asciiView(b));
      expect(asciiView(text)).toBe(text);
    }
  });
});
