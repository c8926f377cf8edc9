import { StringDecoder } from 'node:string_decoder';

/** One server-sent event: its `event:` name (if any) and its joined `data:` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/** Splits an event-stream byte stream into events, however the bytes are cut. */
export class SseReader {
  private readonly decoder = new StringDecoder('utf8');
  private rest = '';
  private data: string[] = [];
  private event: string | undefined;

  push(chunk: Buffer): SseEvent[] {
    const text = this.rest + this.decoder.write(chunk);
    const out: SseEvent[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      this.line(text.slice(start, nl).replace(/\r$/, ''), out);
      start = nl + 1;
    }
    this.rest = text.slice(start);
    return out;
  }

  end(): SseEvent[] {
    const out = this.push(Buffer.alloc(0));
    if (this.rest) this.line(this.rest, out);
    this.rest = '';
    this.line('', out);
    return out;
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      if (this.data.length) out.push({ event: this.event, data: this.data.join('\n') });
      this.data = [];
      this.event = undefined;
    } else if (line.startsWith('data:')) this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line.startsWith('event:')) this.event = line.slice(6).trim();
  }
}

/** An `event:`-named SSE frame (the messages format's) or a bare `data:` frame (the common format's). */
export const frame = (data: unknown, event?: string): string => `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
