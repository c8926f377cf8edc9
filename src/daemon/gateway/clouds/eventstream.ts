import type { UsageFormat } from '../../../shared/providers/types.js';
import { SseUsageTap, type TokenUsage } from '../usage.js';

/**
 * AWS event stream frames (application/vnd.amazon.eventstream: Bedrock's ConverseStream
 * and InvokeModelWithResponseStream answers), as AWS documents them: a prelude of total
 * length, headers length and a CRC (4 bytes each), the headers (name length, name, value
 * type, value), the payload, and the message's CRC. Decoded as the bytes pass through,
 * keeping only an unfinished frame.
 */
export interface Frame {
  headers: Record<string, string>;
  payload: Buffer;
}

const MAX_FRAME = 16 * 1024 * 1024;
/** byte sizes of the fixed-size header value types 0..9 (-1: two-byte length prefix, -2: none) */
const VALUE_SIZE = [0, 0, 1, 2, 4, 8, -1, -1, 8, 16];

function headersOf(b: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < b.length) {
    const nameLen = b[i];
    const name = b.toString('utf8', i + 1, i + 1 + nameLen);
    const type = b[i + 1 + nameLen];
    i += 2 + nameLen;
    const size = VALUE_SIZE[type];
    if (size === undefined) break;
    if (size === -1) {
      const len = b.readUInt16BE(i);
      if (type === 7) out[name] = b.toString('utf8', i + 2, i + 2 + len);
      i += 2 + len;
    } else i += size;
  }
  return out;
}

export class EventStreamDecoder {
  private rest: Buffer = Buffer.alloc(0);

  /** The frames this chunk completes. */
  push(chunk: Buffer): Frame[] {
    let buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    const frames: Frame[] = [];
    while (buf.length >= 12) {
      const total = buf.readUInt32BE(0);
      const headersLen = buf.readUInt32BE(4);
      if (total < 16 || total > MAX_FRAME || headersLen > total - 16) {
        buf = Buffer.alloc(0); // not an event stream: nothing more to read from it
        break;
      }
      if (buf.length < total) break;
      frames.push({ headers: headersOf(buf.subarray(12, 12 + headersLen)), payload: buf.subarray(12 + headersLen, total - 4) });
      buf = buf.subarray(total);
    }
    this.rest = buf.length ? Buffer.from(buf) : Buffer.alloc(0);
    return frames;
  }
}

/** The JSON text an event carries: a Converse event's payload, or an InvokeModel chunk's base64 `bytes`. */
export function eventJson(f: Frame): string | undefined {
  if (f.headers[':message-type'] !== 'event') return undefined;
  const text = f.payload.toString('utf8');
  if (f.headers[':event-type'] !== 'chunk') return text;
  try {
    const bytes = (JSON.parse(text) as { bytes?: unknown }).bytes;
    return typeof bytes === 'string' ? Buffer.from(bytes, 'base64').toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Usage read off an event stream as it passes (Converse's `metadata` event; an Anthropic
 * model's message_start / message_delta inside InvokeModel chunks), with the same
 * estimate as SSE when the stream breaks off before it.
 */
export class EventStreamUsageTap {
  private readonly decoder = new EventStreamDecoder();
  private readonly sse: SseUsageTap;

  constructor(format: UsageFormat) {
    this.sse = new SseUsageTap(format);
  }

  push(chunk: Buffer): void {
    for (const f of this.decoder.push(chunk)) {
      if (f.headers[':message-type'] === 'exception') this.sse.error();
      const json = eventJson(f);
      if (json !== undefined) this.sse.push(Buffer.from(`data: ${json.replace(/\n/g, ' ')}\n`));
    }
  }

  end(): void {
    this.sse.end();
  }

  /** An exception frame and nothing generated, no usage (SseUsageTap.errorOnly). */
  get errorOnly(): boolean {
    return this.sse.errorOnly;
  }

  usage(promptEstimate: number, completionFloor = 0): TokenUsage {
    return this.sse.usage(promptEstimate, completionFloor);
  }
}

/**
 * An InvokeModelWithResponseStream answer of an Anthropic model as the messages format's
 * SSE (`event: <type>` / `data: <json>`), for a caller of the messages format (the alias
 * target of bedrock). An exception frame becomes an `error` event.
 */
export class EventStreamToSse {
  private readonly decoder = new EventStreamDecoder();

  push(chunk: Buffer): string {
    let out = '';
    for (const f of this.decoder.push(chunk)) {
      if (f.headers[':message-type'] === 'exception') {
        const message = f.payload.toString('utf8');
        out += `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: f.headers[':exception-type'] ?? 'api_error', message } })}\n\n`;
        continue;
      }
      const json = eventJson(f);
      if (json === undefined) continue;
      let type = 'message';
      try {
        const t = (JSON.parse(json) as { type?: unknown }).type;
        if (typeof t === 'string') type = t;
      } catch {
        continue;
      }
      out += `event: ${type}\ndata: ${json.replace(/\n/g, ' ')}\n\n`;
    }
    return out;
  }

  end(): string {
    return '';
  }
}
