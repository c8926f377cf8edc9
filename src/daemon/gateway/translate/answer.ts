import { CachedTokensStream, cachedTokensJson } from './cached-tokens.js';
import { commonAnswer, parseCommonAnswer } from './common-response.js';
import { CommonStreamParser, CommonStreamWriter } from './common-stream.js';
import { parseGeminiAnswer } from './gemini-response.js';
import { GeminiStreamParser } from './gemini-stream.js';
import { messagesAnswer, parseMessagesAnswer } from './messages-response.js';
import { MessagesStreamParser, MessagesStreamWriter } from './messages-stream.js';
import type { NeutralAnswer, StreamEvent, WireFormat } from './neutral.js';
import { SseReader, type SseEvent } from './sse.js';

/**
 * An upstream's answer in the shape the caller wants: parsed from the upstream's format
 * into the neutral form and written in the wanted one (JSON whole, streams event by event
 * as bytes arrive). The formats a caller can ask for are the common and the messages one.
 */
export type AnswerFormat = 'common' | 'messages';
type Obj = Record<string, unknown>;

const PARSE: Record<WireFormat, (o: Obj, model: string) => NeutralAnswer> = {
  common: parseCommonAnswer,
  messages: parseMessagesAnswer,
  gemini: parseGeminiAnswer,
};
const EMIT: Record<AnswerFormat, (a: NeutralAnswer) => Obj> = { common: commonAnswer, messages: messagesAnswer };

interface StreamParser {
  parse(e: SseEvent): StreamEvent[];
}
interface StreamWriter {
  write(e: StreamEvent): string;
  end(): string;
}
const PARSERS: Record<WireFormat, () => StreamParser> = {
  common: () => new CommonStreamParser(),
  messages: () => new MessagesStreamParser(),
  gemini: () => new GeminiStreamParser(),
};
const WRITERS: Record<AnswerFormat, (model: string) => StreamWriter> = {
  common: (m) => new CommonStreamWriter(m),
  messages: (m) => new MessagesStreamWriter(m),
};

/** A whole JSON answer from `from` as `to`. Throws on a body that is not JSON. */
export function jsonRewriter(from: WireFormat, to: AnswerFormat, model: string): (body: Buffer) => Buffer {
  return (body) => Buffer.from(JSON.stringify(EMIT[to](PARSE[from](JSON.parse(body.toString('utf8')) as Obj, model))));
}

/** A stream rewriter: bytes of a `from` stream in, text of a `to` stream out. */
export class StreamRewriter {
  private readonly reader = new SseReader();
  private readonly parser: StreamParser;
  private readonly writer: StreamWriter;

  constructor(from: WireFormat, to: AnswerFormat, model: string) {
    this.parser = PARSERS[from]();
    this.writer = WRITERS[to](model);
  }

  private run(events: SseEvent[]): string {
    let out = '';
    for (const e of events) for (const ev of this.parser.parse(e)) out += this.writer.write(ev);
    return out;
  }

  push(chunk: Buffer): string {
    return this.run(this.reader.push(chunk));
  }

  end(): string {
    return this.run(this.reader.end()) + this.writer.end();
  }
}

/**
 * The rewriters of a call whose upstream speaks `from` and whose caller wants `to` (none
 * when they agree, unless the provider counts cache hits under its own name,
 * `cachedTokensField`, and the caller asked for the common shape: cached-tokens.ts).
 */
export function answerRewriters(from: WireFormat, to: AnswerFormat | WireFormat, model: string, cachedTokensField?: string) {
  if (from === 'common' && to === 'common' && cachedTokensField) {
    return { json: cachedTokensJson(cachedTokensField), sse: () => new CachedTokensStream(cachedTokensField) };
  }
  if (from === to || to === 'gemini') return {};
  return { json: jsonRewriter(from, to, model), sse: () => new StreamRewriter(from, to, model) };
}
