/**
 * Provider answers for scripted upstreams, in each provider's documented wire format:
 *   common (OpenAI Chat Completions): https://platform.openai.com/docs/api-reference/chat/object,
 *     streaming https://platform.openai.com/docs/api-reference/chat-streaming and the tool-call
 *     deltas of https://platform.openai.com/docs/guides/function-calling#streaming
 *   messages (Anthropic): https://docs.claude.com/en/api/messages, streaming (with the
 *     tool_use / input_json_delta example) https://docs.claude.com/en/docs/build-with-claude/streaming
 *   Gemini: https://ai.google.dev/api/generate-content#generatecontentresponse and
 *     https://ai.google.dev/gemini-api/docs/function-calling
 */
type Obj = Record<string, unknown>;

const data = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
const event = (name: string, o: Obj) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...o })}\n\n`;

export interface Call {
  id: string;
  name: string;
  /** the arguments' JSON text, in the fragments a stream sends it in */
  fragments: string[];
}

export const common = {
  text(model: string, text: string, usage = { prompt_tokens: 20, completion_tokens: 5 }): Obj {
    return {
      id: 'chatcmpl-fixture1',
      object: 'chat.completion',
      created: 1_750_000_000,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens, prompt_tokens_details: { cached_tokens: 0 } },
    };
  },
  toolCalls(model: string, calls: Call[], usage = { prompt_tokens: 40, completion_tokens: 12 }): Obj {
    return {
      id: 'chatcmpl-fixture2',
      object: 'chat.completion',
      created: 1_750_000_000,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: null, tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.fragments.join('') } })) },
          logprobs: null,
          finish_reason: 'tool_calls',
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
  },
  streamText(model: string, pieces: string[], usage = { prompt_tokens: 20, completion_tokens: 5 }): string[] {
    const head = { id: 'chatcmpl-fixture3', object: 'chat.completion.chunk', created: 1_750_000_000, model };
    return [
      data({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }),
      ...pieces.map((p) => data({ ...head, choices: [{ index: 0, delta: { content: p }, finish_reason: null }] })),
      data({ ...head, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      data({ ...head, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }),
      'data: [DONE]\n\n',
    ];
  },
  /** each call: a first delta with id, type and name (arguments ""), then its argument fragments */
  streamToolCalls(model: string, calls: Call[], usage = { prompt_tokens: 40, completion_tokens: 12 }): string[] {
    const head = { id: 'chatcmpl-fixture4', object: 'chat.completion.chunk', created: 1_750_000_000, model };
    const frames = [data({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] })];
    calls.forEach((c, index) => {
      frames.push(data({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }, finish_reason: null }] }));
      for (const f of c.fragments) frames.push(data({ ...head, choices: [{ index: 0, delta: { tool_calls: [{ index, function: { arguments: f } }] }, finish_reason: null }] }));
    });
    frames.push(data({ ...head, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }));
    frames.push(data({ ...head, choices: [], usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } }));
    frames.push('data: [DONE]\n\n');
    return frames;
  },
};

export const messages = {
  text(model: string, text: string, usage: Obj = { input_tokens: 20, output_tokens: 5 }): Obj {
    return { id: 'msg_fixture1', type: 'message', role: 'assistant', model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage };
  },
  toolUse(model: string, calls: Call[], opts: { thinking?: { text: string; signature: string }; text?: string; usage?: Obj } = {}): Obj {
    const content: Obj[] = [];
    if (opts.thinking) content.push({ type: 'thinking', thinking: opts.thinking.text, signature: opts.thinking.signature });
    if (opts.text) content.push({ type: 'text', text: opts.text });
    for (const c of calls) content.push({ type: 'tool_use', id: c.id, name: c.name, input: JSON.parse(c.fragments.join('')) });
    return { id: 'msg_fixture2', type: 'message', role: 'assistant', model, content, stop_reason: 'tool_use', stop_sequence: null, usage: opts.usage ?? { input_tokens: 40, output_tokens: 12 } };
  },
  streamText(model: string, pieces: string[], usage: Obj = { input_tokens: 20, output_tokens: 5 }): string[] {
    return [
      event('message_start', { message: { id: 'msg_fixture3', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } }),
      event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      event('ping', {}),
      ...pieces.map((p) => event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: p } })),
      event('content_block_stop', { index: 0 }),
      event('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }),
      event('message_stop', {}),
    ];
  },
  streamToolUse(model: string, calls: Call[], opts: { thinking?: { pieces: string[]; signature: string }; text?: string; usage?: Obj } = {}): string[] {
    const usage = opts.usage ?? { input_tokens: 40, output_tokens: 12 };
    const frames = [event('message_start', { message: { id: 'msg_fixture4', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } })];
    let index = 0;
    if (opts.thinking) {
      frames.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      for (const p of opts.thinking.pieces) frames.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: p } }));
      frames.push(event('content_block_delta', { index, delta: { type: 'signature_delta', signature: opts.thinking.signature } }), event('content_block_stop', { index }));
      index++;
    }
    if (opts.text) {
      frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }), event('content_block_delta', { index, delta: { type: 'text_delta', text: opts.text } }), event('content_block_stop', { index }));
      index++;
    }
    for (const c of calls) {
      frames.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: c.id, name: c.name, input: {} } }));
      frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: '' } }));
      for (const f of c.fragments) frames.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: f } }));
      frames.push(event('content_block_stop', { index }));
      index++;
    }
    frames.push(event('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }), event('message_stop', {}));
    return frames;
  },
};

export const gemini = {
  text(model: string, text: string, usage: Obj = { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 }): Obj {
    return { candidates: [{ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, modelVersion: model, responseId: 'gemini-fixture1' };
  },
  functionCall(model: string, calls: { name: string; args: Obj; signature?: string }[], usage: Obj = { promptTokenCount: 40, candidatesTokenCount: 12, thoughtsTokenCount: 30, totalTokenCount: 82 }): Obj {
    return {
      candidates: [
        { content: { role: 'model', parts: calls.map((c) => ({ functionCall: { name: c.name, args: c.args }, ...(c.signature && { thoughtSignature: c.signature }) })) }, finishReason: 'STOP', index: 0 },
      ],
      usageMetadata: usage,
      modelVersion: model,
      responseId: 'gemini-fixture2',
    };
  },
  /** streamGenerateContent?alt=sse: each event a GenerateContentResponse; the last carries finishReason and usage */
  stream(model: string, chunks: Obj[][], usage: Obj = { promptTokenCount: 20, candidatesTokenCount: 5, totalTokenCount: 25 }): string[] {
    return chunks.map((parts, i) =>
      data({
        candidates: [{ content: { role: 'model', parts }, ...(i === chunks.length - 1 && { finishReason: 'STOP' }), index: 0 }],
        ...(i === chunks.length - 1 && { usageMetadata: usage }),
        modelVersion: model,
        responseId: 'gemini-fixture3',
      }),
    );
  },
};
