import { HumanMessage, type AIMessage, type AIMessageChunk, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { expectRecordedCalls, loop, startTarget, strictHeaders } from './target.js';

/**
 * LangChain's ChatOpenAI (@langchain/openai) with a bound tool in the usual agent loop:
 * invoke, run each tool call, send the ToolMessages back, invoke again; JSON and streaming.
 */
const call = { name: 'get_weather', input: { city: 'Paris' } };
const final = (r: string) => `Forecast: ${r}`;
const targets = { mock: await startTarget('mock', call, final), proxy: await startTarget('proxy', call, final), agw: await startTarget('agw', call, final) };
afterAll(() => Promise.all(Object.values(targets).map((t) => t.close())));

const getWeather = tool(async ({ city }: { city: string }) => JSON.stringify({ city, temperature: 22, sky: 'sunny-from-the-tool' }), {
  name: 'get_weather',
  description: 'The current weather in a city',
  schema: z.object({ city: z.string() }),
});

/** One model turn: `invoke` (JSON), or `stream` with the chunks joined as LangChain's own agents do. */
async function turn(model: ReturnType<ChatOpenAI['bindTools']>, messages: BaseMessage[], streaming: boolean): Promise<AIMessage | AIMessageChunk> {
  if (!streaming) return model.invoke(messages);
  let acc: AIMessageChunk | undefined;
  for await (const chunk of await model.stream(messages)) acc = acc ? acc.concat(chunk) : chunk;
  return acc!;
}

describe.each(Object.values(targets))('LangChain ChatOpenAI tool loop via $via', (t) => {
  const why = t.unavailable ? ` (skipped: ${t.unavailable})` : '';
  for (const streaming of [false, true]) {
    it.skipIf(t.unavailable !== '')(`runs get_weather and answers with its result (${streaming ? 'stream' : 'invoke'})${why}`, async () => {
      const before = t.forOpenaiClients.requests.length;
      // streamUsage: usage comes from the stream (stream_options.include_usage), so LangChain never counts tokens itself
      const model = new ChatOpenAI({ model: t.openaiModel, apiKey: t.key, streamUsage: true, maxRetries: 0, configuration: { baseURL: t.openaiBase, defaultHeaders: strictHeaders(t) } }).bindTools([getWeather]);
      const messages: BaseMessage[] = [new HumanMessage('What is the weather in Paris?')];
      const first = await turn(model, messages, streaming);
      expect(first.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Paris' }]]);
      messages.push(first);
      for (const c of first.tool_calls ?? []) messages.push(await getWeather.invoke(c));
      const answer = await turn(model, messages, streaming);
      expect(String(answer.content)).toContain('sunny-from-the-tool');
      expect(answer.usage_metadata?.input_tokens).toBeGreaterThan(0);
      const seen = t.forOpenaiClients.requests.slice(before);
      expect(loop({ ...t.forOpenaiClients, requests: seen })).toEqual(['tool', 'final']);
      expect(seen.filter((q) => q.answered !== 'other').every((q) => (q.body.stream === true) === streaming)).toBe(true);
      // through agw (strict): the ToolMessage's `name` is not a field lost on the way to the messages format
      if (t.via === 'agw') await expectRecordedCalls(t, t.openaiModel, 2);
    });
  }
});
