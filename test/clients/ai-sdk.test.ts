import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, streamText, tool, type LanguageModel } from 'ai';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectRecordedCalls, loop, startTarget, strictHeaders, type ClientTarget } from './target.js';

/**
 * The Vercel AI SDK (`ai` with `@ai-sdk/anthropic` and `@ai-sdk/openai-compatible`) in its
 * own tool loop (`stopWhen`): the model asks for get_weather, the SDK runs the tool and
 * sends the result back, the model answers with it; generateText (JSON) and streamText (SSE).
 * Through agw each client's alias is served by the other format's provider, strict (nothing dropped).
 */
const call = { name: 'get_weather', input: { city: 'Paris' } };
const final = (r: string) => `Forecast: ${r}`;
const targets = { mock: await startTarget('mock', call, final), proxy: await startTarget('proxy', call, final), agw: await startTarget('agw', call, final) };
afterAll(() => Promise.all(Object.values(targets).map((t) => t.close())));

const tools = {
  get_weather: tool({
    description: 'The current weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, temperature: 22, sky: 'sunny-from-the-tool' }),
  }),
};

const clients: { name: string; format: 'anthropic' | 'openai'; model: (t: ClientTarget) => LanguageModel }[] = [
  { name: '@ai-sdk/anthropic', format: 'anthropic', model: (t) => createAnthropic({ baseURL: `${t.anthropicBase}/v1`, apiKey: t.key, headers: strictHeaders(t) })(t.anthropicModel) },
  {
    name: '@ai-sdk/openai-compatible',
    format: 'openai',
    model: (t) => createOpenAICompatible({ name: 'agw', baseURL: t.openaiBase, apiKey: t.key, includeUsage: true, headers: strictHeaders(t) }).chatModel(t.openaiModel),
  },
];

describe.each(Object.values(targets))('Vercel AI SDK tool loops via $via', (t) => {
  const skip = t.unavailable !== '';
  const why = skip ? ` (skipped: ${t.unavailable})` : '';
  describe.each(clients)('$name', (c) => {
    const upstream = () => (c.format === 'anthropic' ? t.forAnthropicClients : t.forOpenaiClients);

    it.skipIf(skip)(`generateText runs get_weather and answers with its result${why}`, async () => {
      const before = upstream().requests.length;
      const r = await generateText({ model: c.model(t), tools, stopWhen: stepCountIs(4), prompt: 'What is the weather in Paris?', maxRetries: 0 });
      expect(r.text).toContain('sunny-from-the-tool');
      expect(r.steps.length).toBe(2);
      expect(r.steps[0].toolCalls.map((x) => [x.toolName, x.input])).toEqual([['get_weather', { city: 'Paris' }]]);
      expect(r.totalUsage.inputTokens).toBeGreaterThan(0);
      expect(loop({ ...upstream(), requests: upstream().requests.slice(before) })).toEqual(['tool', 'final']);
      if (t.via === 'agw') await expectRecordedCalls(t, c.format === 'anthropic' ? t.anthropicModel : t.openaiModel, 2);
    });

    it.skipIf(skip)(`streamText runs the same loop streamed${why}`, async () => {
      const before = upstream().requests.length;
      const r = streamText({ model: c.model(t), tools, stopWhen: stepCountIs(4), prompt: 'What is the weather in Paris?', maxRetries: 0 });
      let text = '';
      for await (const part of r.textStream) text += part;
      expect(text).toContain('sunny-from-the-tool');
      expect((await r.steps).length).toBe(2);
      const seen = upstream().requests.slice(before);
      expect(loop({ ...upstream(), requests: seen })).toEqual(['tool', 'final']);
      expect(seen.every((q) => q.answered === 'other' || q.body.stream === true)).toBe(true);
      if (t.via === 'agw') await expectRecordedCalls(t, c.format === 'anthropic' ? t.anthropicModel : t.openaiModel, 2);
    });
  });
});
