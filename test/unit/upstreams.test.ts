import { afterEach, describe, expect, it } from 'vitest';
import { request } from 'undici';
import {
  anthropicInputTokens,
  chunkText,
  countTokens,
  openAiPromptTokens,
  simReply,
  startAnthropicSim,
  startDemoUpstreams,
  startOpenAiSim,
  MAX_RECORDED,
  type SimUpstream,
} from '../../src/daemon/demo/upstreams.js';

const sims: SimUpstream[] = [];
async function openai(opts?: Parameters<typeof startOpenAiSim>[0]): Promise<SimUpstream> {
  const s = await startOpenAiSim(opts);
  sims.push(s);
  return s;
}
async function anthropic(opts?: Parameters<typeof startAnthropicSim>[0]): Promise<SimUpstream> {
  const s = await startAnthropicSim(opts);
  sims.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(sims.splice(0).map((s) => s.close()));
});

const chatBody = (extra: Record<string, unknown> = {}) => ({
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: 'Hello there, how are you today?' },
  ],
  ...extra,
});

function postOpenAi(sim: SimUpstream, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${sim.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers },
    body: JSON.stringify(body),
  });
}

const anthropicHeaders = { 'content-type': 'application/json', 'x-api-key': 'ak-test', 'anthropic-version': '2023-06-01' };
const msgBody = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  system: 'Be brief.',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
  ...extra,
});
function postAnthropic(sim: SimUpstream, body: unknown, headers: Record<string, string> = anthropicHeaders) {
  return fetch(`${sim.url}/v1/messages`, { method: 'POST', headers, body: JSON.stringify(body) });
}

/** Parses an SSE body into { event, data } frames. */
function parseSse(text: string): { event?: string; data: string }[] {
  return text
    .split('\n\n')
    .filter((b) => b.trim() !== '')
    .map((block) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      return { event, data: data.join('\n') };
    });
}

describe('token helpers', () => {
  it('countTokens is ceil(len/4) and chunkText round-trips', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('abcd')).toBe(1);
    expect(countTokens('abcde')).toBe(2);
    const t = simReply('one two  three four five');
    expect(t.startsWith('Echo: one two  three')).toBe(true);
    const chunks = chunkText(t);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.join('')).toBe(t);
    expect(simReply('x'.repeat(500))).toContain('x'.repeat(200));
    expect(simReply('x'.repeat(500))).not.toContain('x'.repeat(201));
  });
});

describe('OpenAI sim', () => {
  it('answers non-stream chat completions with deterministic content and usage', async () => {
    const sim = await openai({ apiKey: 'sk-test' });
    expect(sim.url).toBe(`http://127.0.0.1:${sim.port}`);
    const body = chatBody();
    const res = await postOpenAi(sim, body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const json = (await res.json()) as any;
    const content = simReply('Hello there, how are you today?');
    const prompt = openAiPromptTokens(body.messages);
    expect(prompt).toBe(countTokens('You are terse.') + 3 + countTokens('Hello there, how are you today?') + 3);
    expect(json).toMatchObject({
      object: 'chat.completion',
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: prompt, completion_tokens: countTokens(content), total_tokens: prompt + countTokens(content) },
    });
    expect(json.id).toMatch(/^chatcmpl-/);
    expect(typeof json.created).toBe('number');
    // deterministic
    const again = (await (await postOpenAi(sim, body)).json()) as any;
    expect(again.choices[0].message.content).toBe(content);
    expect(again.usage).toEqual(json.usage);
  });

  it('rejects a wrong key with 401 invalid_api_key', async () => {
    const sim = await openai({ apiKey: 'sk-test' });
    const res = await postOpenAi(sim, chatBody(), { authorization: 'Bearer nope' });
    expect(res.status).toBe(401);
    const json = (await res.json()) as any;
    expect(json.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key' });
    expect(typeof json.error.message).toBe('string');
  });

  it('returns 400 on a malformed body', async () => {
    const sim = await openai();
    const res = await fetch(`${sim.url}/v1/chat/completions`, { method: 'POST', body: '{nope' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as any).error.type).toBe('invalid_request_error');
  });

  it('streams chunks in order, usage chunk only when include_usage is true', async () => {
    const sim = await openai();
    const content = simReply('Hello there, how are you today?');

    const res = await postOpenAi(sim, chatBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const frames = parseSse(await res.text());
    expect(frames.at(-1)!.data).toBe('[DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.data));
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe('gpt-4o-mini');
      expect(c.id).toBe(chunks[0].id);
    }
    const contentChunks = chunks.filter((c) => c.choices[0]?.delta?.content);
    expect(contentChunks.length).toBeGreaterThanOrEqual(3);
    expect(contentChunks.map((c) => c.choices[0].delta.content).join('')).toBe(content);
    const last = chunks.at(-1);
    expect(last.choices[0].finish_reason).toBe('stop');
    expect(chunks.some((c) => c.usage)).toBe(false);

    const res2 = await postOpenAi(sim, chatBody({ stream: true, stream_options: { include_usage: true } }));
    const frames2 = parseSse(await res2.text());
    expect(frames2.at(-1)!.data).toBe('[DONE]');
    const usageChunk = JSON.parse(frames2.at(-2)!.data);
    expect(usageChunk.choices).toEqual([]);
    const prompt = openAiPromptTokens(chatBody().messages);
    expect(usageChunk.usage).toEqual({
      prompt_tokens: prompt,
      completion_tokens: countTokens(content),
      total_tokens: prompt + countTokens(content),
    });
    expect(JSON.parse(frames2.at(-3)!.data).choices[0].finish_reason).toBe('stop');
  });

  it('truncates at max_tokens with finish_reason length', async () => {
    const sim = await openai();
    const json = (await (await postOpenAi(sim, chatBody({ max_tokens: 2 }))).json()) as any;
    expect(json.choices[0].finish_reason).toBe('length');
    expect(json.usage.completion_tokens).toBe(2);
  });

  it('serves /v1/models and a generic 200 for other paths', async () => {
    const sim = await openai();
    const models = (await (await fetch(`${sim.url}/v1/models`)).json()) as any;
    expect(models.object).toBe('list');
    expect(models.data.length).toBeGreaterThan(0);
    const res = await fetch(`${sim.url}/v1/images/generations?x=1`, { method: 'POST', body: '{"prompt":"cat"}' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, path: '/v1/images/generations' });
  });

  it('records method, path, query, headers and body', async () => {
    const sim = await openai();
    await (await fetch(`${sim.url}/v1/embeddings?a=1&b=2`, {
      method: 'POST',
      headers: { 'x-custom': 'yes', 'content-type': 'application/json' },
      body: '{"input":"hi"}',
    })).text();
    await (await fetch(`${sim.url}/v1/models`)).text();
    expect(sim.requests).toHaveLength(2);
    expect(sim.requests[0]).toMatchObject({ method: 'POST', path: '/v1/embeddings', query: 'a=1&b=2', body: '{"input":"hi"}' });
    expect(sim.requests[0].headers['x-custom']).toBe('yes');
    expect(sim.requests[1]).toMatchObject({ method: 'GET', path: '/v1/models', query: '', body: '' });
  });

  it('caps recording and can disable it', async () => {
    expect(MAX_RECORDED).toBe(10_000);
    const sim = await openai({ record: false });
    await (await fetch(`${sim.url}/v1/models`)).text();
    expect(sim.requests).toHaveLength(0);
  });

  it('rate_limit → 429 with retry-after, error → 500, back to ok', async () => {
    const sim = await openai();
    sim.setMode('rate_limit');
    const r1 = await postOpenAi(sim, chatBody());
    expect(r1.status).toBe(429);
    expect(r1.headers.get('retry-after')).toBe('1');
    expect(((await r1.json()) as any).error.code).toBe('rate_limit_exceeded');
    sim.setMode('error');
    const r2 = await postOpenAi(sim, chatBody());
    expect(r2.status).toBe(500);
    expect(((await r2.json()) as any).error.type).toBe('server_error');
    sim.setMode('ok');
    expect((await postOpenAi(sim, chatBody())).status).toBe(200);
  });

  it('slow waits delayMs before answering', async () => {
    const sim = await openai();
    sim.setMode('slow', { delayMs: 150 });
    const t0 = Date.now();
    const res = await postOpenAi(sim, chatBody());
    expect(res.status).toBe(200);
    await res.json();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);
  });

  it('down destroys the socket (client sees a socket error)', async () => {
    const sim = await openai();
    sim.setMode('down');
    await expect(postOpenAi(sim, chatBody())).rejects.toThrow();
    await expect(
      request(`${sim.url}/v1/chat/completions`, { method: 'POST', body: JSON.stringify(chatBody()) }),
    ).rejects.toMatchObject({ code: expect.stringMatching(/^UND_ERR_SOCKET|ECONNRESET/) });
  });

  it('drop_mid_stream sends two chunks then kills the stream', async () => {
    const sim = await openai();
    sim.setMode('drop_mid_stream');
    const res = await request(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chatBody({ stream: true })),
    });
    expect(res.statusCode).toBe(200);
    let received = '';
    await expect(
      (async () => {
        for await (const c of res.body) received += c.toString();
      })(),
    ).rejects.toThrow();
    const frames = parseSse(received);
    expect(frames).toHaveLength(2);
    expect(received).not.toContain('[DONE]');
    // non-stream requests are dropped outright
    await expect(postOpenAi(sim, chatBody())).rejects.toThrow();
  });

  it('hang never answers but close() still completes', async () => {
    const sim = await startOpenAiSim();
    sim.setMode('hang');
    const pending = postOpenAi(sim, chatBody()).then(
      () => 'answered',
      () => 'failed',
    );
    while (sim.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    const raced = await Promise.race([pending, new Promise((r) => setTimeout(() => r('still-hanging'), 100))]);
    expect(raced).toBe('still-hanging');
    const t0 = Date.now();
    await sim.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await pending).toBe('failed');
    await sim.close(); // idempotent
  });

  it('close() also cancels pending slow replies', async () => {
    const sim = await startOpenAiSim();
    sim.setMode('slow', { delayMs: 60_000 });
    const pending = postOpenAi(sim, chatBody()).then(
      () => 'answered',
      () => 'failed',
    );
    while (sim.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    await sim.close();
    expect(await pending).toBe('failed');
  });

  it('rejects unknown modes', async () => {
    const sim = await openai();
    expect(() => sim.setMode('bogus' as never)).toThrow();
  });
});

describe('Anthropic sim', () => {
  it('answers non-stream messages with usage', async () => {
    const sim = await anthropic({ apiKey: 'ak-test' });
    const body = msgBody();
    const res = await postAnthropic(sim, body);
    expect(res.status).toBe(200);
    const json = (await res.json()) as any;
    const text = simReply('What is the capital of France?');
    const input = anthropicInputTokens(body.system, body.messages);
    expect(input).toBe(countTokens('Be brief.') + 3 + countTokens('What is the capital of France?') + 3);
    expect(json).toEqual({
      id: json.id,
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: countTokens(text) },
    });
    expect(json.id).toMatch(/^msg_/);
  });

  it('validates key, version header and max_tokens', async () => {
    const sim = await anthropic({ apiKey: 'ak-test' });
    const r1 = await postAnthropic(sim, msgBody(), { ...anthropicHeaders, 'x-api-key': 'wrong' });
    expect(r1.status).toBe(401);
    expect(((await r1.json()) as any).type).toBe('error');
    const { 'x-api-key': _k, ...noKey } = anthropicHeaders;
    expect((await postAnthropic(sim, msgBody(), noKey)).status).toBe(401);
    const { 'anthropic-version': _v, ...noVersion } = anthropicHeaders;
    const r2 = await postAnthropic(sim, msgBody(), noVersion);
    expect(r2.status).toBe(400);
    await r2.text();
    const { max_tokens: _m, ...noMax } = msgBody();
    const r3 = await postAnthropic(sim, noMax);
    expect(r3.status).toBe(400);
    expect(await r3.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('streams the real event sequence', async () => {
    const sim = await anthropic();
    const res = await postAnthropic(sim, msgBody({ stream: true }));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const frames = parseSse(await res.text());
    const events = frames.map((f) => f.event);
    const deltas = events.filter((e) => e === 'content_block_delta').length;
    expect(deltas).toBeGreaterThanOrEqual(3);
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      ...Array(deltas).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    for (const f of frames) expect(JSON.parse(f.data).type).toBe(f.event);
    const start = JSON.parse(frames[0].data);
    const body = msgBody();
    expect(start.message.usage).toEqual({ input_tokens: anthropicInputTokens(body.system, body.messages), output_tokens: 1 });
    const text = frames
      .filter((f) => f.event === 'content_block_delta')
      .map((f) => JSON.parse(f.data).delta)
      .map((d) => {
        expect(d.type).toBe('text_delta');
        return d.text as string;
      })
      .join('');
    expect(text).toBe(simReply('What is the capital of France?'));
    const md = JSON.parse(frames.at(-2)!.data);
    expect(md.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(md.usage).toEqual({ output_tokens: countTokens(text) });
  });

  it('honours stop_sequences', async () => {
    const sim = await anthropic();
    const json = (await (await postAnthropic(sim, msgBody({ stop_sequences: ['capital'] }))).json()) as any;
    expect(json.stop_reason).toBe('stop_sequence');
    expect(json.stop_sequence).toBe('capital');
    expect(json.content[0].text).toBe('Echo: What is the ');
  });

  it('modes: 429 / 500 / down / drop_mid_stream', async () => {
    const sim = await anthropic();
    sim.setMode('rate_limit');
    const r1 = await postAnthropic(sim, msgBody());
    expect(r1.status).toBe(429);
    expect(r1.headers.get('retry-after')).toBe('1');
    expect(((await r1.json()) as any).error.type).toBe('rate_limit_error');
    sim.setMode('error');
    const r2 = await postAnthropic(sim, msgBody());
    expect(r2.status).toBe(500);
    expect(((await r2.json()) as any).error.type).toBe('api_error');
    sim.setMode('down');
    await expect(postAnthropic(sim, msgBody())).rejects.toThrow();
    sim.setMode('drop_mid_stream');
    const res = await postAnthropic(sim, msgBody({ stream: true }));
    expect(res.status).toBe(200);
    let received = '';
    const reader = res.body!.getReader();
    await expect(
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          received += Buffer.from(value).toString();
        }
      })(),
    ).rejects.toThrow();
    expect(parseSse(received).map((f) => f.event)).toEqual(['message_start', 'content_block_start']);
    sim.setMode('ok');
    expect((await postAnthropic(sim, msgBody())).status).toBe(200);
  });

  it('serves /v1/models', async () => {
    const sim = await anthropic();
    const res = await fetch(`${sim.url}/v1/models`, { headers: anthropicHeaders });
    const json = (await res.json()) as any;
    expect(json.data[0].type).toBe('model');
    expect(json.has_more).toBe(false);
  });
});

describe('startDemoUpstreams', () => {
  it('starts both sims and closes them together', async () => {
    const demo = await startDemoUpstreams({ chunkDelayMs: 1 });
    try {
      const res = await postOpenAi(demo.openai, chatBody({ stream: true }));
      expect(parseSse(await res.text()).at(-1)!.data).toBe('[DONE]');
      const r2 = await postAnthropic(demo.anthropic, msgBody());
      expect(r2.status).toBe(200);
      await r2.json();
      expect(demo.openai.requests).toHaveLength(0); // demo does not record by default
    } finally {
      await demo.close();
    }
  });
});
